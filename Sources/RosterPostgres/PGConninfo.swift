/// Conninfo strings as they may be shown: a password never reaches a log line or an error message.
public enum PGConninfo {
    /// `conninfo` with the value of every `password=` (keyword form) and the password of a
    /// `postgresql://user:password@host` URI replaced by `***`.
    public static func masked(_ conninfo: String) -> String {
        if conninfo.hasPrefix("postgresql://") || conninfo.hasPrefix("postgres://") {
            return maskedURI(conninfo)
        }
        return maskedKeywords(conninfo)
    }

    private static func maskedURI(_ uri: String) -> String {
        var text = uri
        // The query string may carry password= too.
        if let query = text.firstIndex(of: "?") {
            let head = String(text[..<query])
            let parameters = text[text.index(after: query)...].split(separator: "&", omittingEmptySubsequences: false).map { part in
                part.lowercased().hasPrefix("password=") ? "password=***" : String(part)
            }
            text = head + "?" + parameters.joined(separator: "&")
        }
        guard let colonOfScheme = text.firstIndex(of: ":") else { return text }
        let authorityStart = text.index(colonOfScheme, offsetBy: 3, limitedBy: text.endIndex) ?? text.endIndex
        let authorityEnd = text[authorityStart...].firstIndex(where: { $0 == "/" || $0 == "?" }) ?? text.endIndex
        let authority = text[authorityStart..<authorityEnd]
        guard let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else { return text }
        return String(text[..<text.index(after: colon)]) + "***" + String(text[at...])
    }

    private static func maskedKeywords(_ conninfo: String) -> String {
        let characters = Array(conninfo)
        var out = ""
        var index = 0
        while index < characters.count {
            // A keyword: letters and underscores up to `=` (spaces allowed around it).
            var keywordEnd = index
            while keywordEnd < characters.count, characters[keywordEnd].isLetter || characters[keywordEnd] == "_" {
                keywordEnd += 1
            }
            var equals = keywordEnd
            while equals < characters.count, characters[equals] == " " { equals += 1 }
            guard keywordEnd > index, equals < characters.count, characters[equals] == "=" else {
                out.append(characters[index])
                index += 1
                continue
            }
            let keyword = String(characters[index..<keywordEnd])
            var valueStart = equals + 1
            while valueStart < characters.count, characters[valueStart] == " " { valueStart += 1 }
            let valueEnd = endOfValue(characters, from: valueStart)
            out += String(characters[index..<valueStart])
            out += keyword.lowercased() == "password" ? "***" : String(characters[valueStart..<valueEnd])
            index = valueEnd
        }
        return out
    }

    /// Where a value ends: a single-quoted one (with `\` escapes) at its closing quote, a bare one at a space.
    private static func endOfValue(_ characters: [Character], from start: Int) -> Int {
        var index = start
        guard index < characters.count, characters[index] == "'" else {
            while index < characters.count, characters[index] != " " { index += 1 }
            return index
        }
        index += 1
        while index < characters.count {
            if characters[index] == "\\" { index += 2; continue }
            if characters[index] == "'" { return index + 1 }
            index += 1
        }
        return characters.count
    }
}
