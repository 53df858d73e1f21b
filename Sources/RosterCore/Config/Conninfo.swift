/// libpq connection strings as the daemon may show them: with any password replaced, so that a log line, an
/// error or `--check-config` never carries one.
public enum Conninfo {
    /// What stands in for a password.
    public static let mask = "***"

    /// `conninfo` with the value of every `password=` (keyword form, quoted or not) and the password of a
    /// `postgresql://user:password@host` URI replaced by `mask`; everything else as written.
    public static func masked(_ conninfo: String) -> String {
        let text = Array(conninfo.unicodeScalars)
        if conninfo.hasPrefix("postgresql://") || conninfo.hasPrefix("postgres://") {
            return maskedURI(text)
        }
        return maskedKeywords(text)
    }

    /// Keyword form: `key = value` pairs separated by blanks; a value is bare or in single quotes with
    /// backslash escapes (libpq's `conninfo_parse`).
    private static func maskedKeywords(_ text: [Unicode.Scalar]) -> String {
        var out = String.UnicodeScalarView()
        var index = 0
        while index < text.count {
            // Blanks between pairs are copied.
            while index < text.count, isBlank(text[index]) {
                out.append(text[index])
                index += 1
            }
            var key = String.UnicodeScalarView()
            while index < text.count, text[index] != "=", !isBlank(text[index]) {
                key.append(text[index])
                index += 1
            }
            out.append(contentsOf: key)
            while index < text.count, isBlank(text[index]) {
                out.append(text[index])
                index += 1
            }
            guard index < text.count, text[index] == "=" else { continue }
            out.append("=")
            index += 1
            while index < text.count, isBlank(text[index]) {
                out.append(text[index])
                index += 1
            }
            let start = index
            if index < text.count, text[index] == "'" {
                index += 1
                while index < text.count, text[index] != "'" {
                    index += text[index] == "\\" ? 2 : 1
                }
                index = min(index + 1, text.count)
            } else {
                while index < text.count, !isBlank(text[index]) {
                    index += text[index] == "\\" ? 2 : 1
                }
                index = min(index, text.count)
            }
            if String(key).lowercased() == "password" {
                out.append(contentsOf: mask.unicodeScalars)
            } else {
                out.append(contentsOf: text[start..<index])
            }
        }
        return String(out)
    }

    /// URI form: the password between `user:` and `@` in the authority, and a `password=` query parameter.
    private static func maskedURI(_ text: [Unicode.Scalar]) -> String {
        let uri = String(String.UnicodeScalarView(text))
        guard let schemeEnd = uri.range(of: "://") else { return uri }
        let rest = uri[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        var authority = String(rest[..<authorityEnd])
        if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
            authority = String(authority[...colon]) + mask + String(authority[at...])
        }
        var tail = String(rest[authorityEnd...])
        if let query = tail.firstIndex(of: "?") {
            let parameters = tail[tail.index(after: query)...].split(separator: "&", omittingEmptySubsequences: false)
                .map { parameter -> String in
                    parameter.lowercased().hasPrefix("password=") ? "password=" + mask : String(parameter)
                }
            tail = String(tail[...query]) + parameters.joined(separator: "&")
        }
        return String(uri[..<schemeEnd.upperBound]) + authority + tail
    }

    private static func isBlank(_ scalar: Unicode.Scalar) -> Bool {
        scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r"
    }
}
