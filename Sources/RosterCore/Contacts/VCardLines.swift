/// A vCard content line split into its parts (RFC 6350 §3.3): `[group.]name *(;param) : value`.
struct VCardLine {
    /// Upper-cased, without its group.
    var name: String
    /// Parameter names upper-cased, values with surrounding quotes removed.
    var parameters: [String: String]
    var value: [Unicode.Scalar]
    /// The 1-based physical line it starts on.
    var line: Int

    /// `nil` when there is no `:` outside double quotes, no name before it, or a parameter without a name
    /// (`X;:y`, `X;;TYPE=a:y`, `X;=:y`): RFC 6350 §3.3 gives every parameter one, so such a line has no
    /// `name:` shape.
    init?(_ scalars: [Unicode.Scalar], line: Int) {
        var quoted = false
        var colon: Int?
        for (index, scalar) in scalars.enumerated() {
            if scalar == "\"" { quoted.toggle() }
            if scalar == ":" && !quoted {
                colon = index
                break
            }
        }
        guard let colon else { return nil }
        let head = VCardLine.split(Array(scalars[..<colon]), at: ";")
        var name = String(String.UnicodeScalarView(head.first ?? [])).uppercased()
        if let dot = name.lastIndex(of: ".") { name = String(name[name.index(after: dot)...]) }
        guard !name.isEmpty else { return nil }
        var parameters: [String: String] = [:]
        for parameter in head.dropFirst() {
            let text = String(String.UnicodeScalarView(parameter))
            let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard let first = parts.first, !first.isEmpty else { return nil }
            let key = first.uppercased()
            var value = parts.count > 1 ? parts[1] : ""
            if value.hasPrefix("\"") && value.hasSuffix("\"") && value.count >= 2 {
                value = String(value.dropFirst().dropLast())
            }
            if parameters[key] == nil { parameters[key] = value }
        }
        self.name = name
        self.parameters = parameters
        self.value = Array(scalars[(colon + 1)...])
        self.line = line
    }

    /// Splits at `separator` outside double quotes.
    private static func split(_ scalars: [Unicode.Scalar], at separator: Unicode.Scalar) -> [[Unicode.Scalar]] {
        var parts: [[Unicode.Scalar]] = [[]]
        var quoted = false
        for scalar in scalars {
            if scalar == "\"" { quoted.toggle() }
            if scalar == separator && !quoted {
                parts.append([])
            } else {
                parts[parts.count - 1].append(scalar)
            }
        }
        return parts
    }

    /// Physical lines (CRLF, LF or a lone CR end one) unfolded into logical lines (§3.2): a line starting
    /// with a space or tab continues the one before. Blank lines are dropped; a leading BOM is ignored.
    static func logicalLines(_ text: String) -> [(scalars: [Unicode.Scalar], line: Int)] {
        var physical: [[Unicode.Scalar]] = [[]]
        for scalar in ContactDraft.unifiedLineBreaks(text).unicodeScalars {
            if scalar == "\n" {
                physical.append([])
            } else {
                physical[physical.count - 1].append(scalar)
            }
        }
        if physical[0].first == "\u{FEFF}" { physical[0].removeFirst() }
        var logical: [(scalars: [Unicode.Scalar], line: Int)] = []
        for (index, line) in physical.enumerated() where !line.isEmpty {
            if let first = line.first, first == " " || first == "\t", !logical.isEmpty {
                logical[logical.count - 1].scalars.append(contentsOf: line.dropFirst())
            } else {
                logical.append((line, index + 1))
            }
        }
        return logical
    }
}
