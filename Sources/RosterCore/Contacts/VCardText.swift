/// RFC 6350's text-level rules: value escaping (§3.4) and line folding (§3.2).
enum VCardText {
    /// Escapes `\`, `,`, `;` and line breaks; `,` and `;` matter only in structured values like N, but
    /// escaping them everywhere is allowed and keeps one rule.
    static func escape(_ value: String) -> String {
        var result = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\": result += "\\\\"
            case ",": result += "\\,"
            case ";": result += "\\;"
            case "\n": result += "\\n"
            case "\r": continue
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Reverses `escape`; an unknown escape such as `\:` stands for its character, as readers commonly do.
    static func unescape<S: Sequence<Unicode.Scalar>>(_ value: S) -> String {
        var result = String.UnicodeScalarView()
        var escaping = false
        for scalar in value {
            if escaping {
                result.append(scalar == "n" || scalar == "N" ? "\n" : scalar)
                escaping = false
            } else if scalar == "\\" {
                escaping = true
            } else {
                result.append(scalar)
            }
        }
        if escaping { result.append("\\") }
        return String(result)
    }

    /// Splits a structured value (N) at unescaped `;`, leaving each component escaped.
    static func components(_ value: String) -> [[Unicode.Scalar]] {
        var parts: [[Unicode.Scalar]] = [[]]
        var escaping = false
        for scalar in value.unicodeScalars {
            if escaping {
                escaping = false
            } else if scalar == "\\" {
                escaping = true
            } else if scalar == ";" {
                parts.append([])
                continue
            }
            parts[parts.count - 1].append(scalar)
        }
        return parts
    }

    /// The line as one or more physical lines of at most 75 octets each (continuations begin with a space,
    /// which counts), cut only between Unicode scalars so no UTF-8 sequence is split; every line ends in CRLF.
    static func fold(_ line: String) -> String {
        let limit = 75
        var result = ""
        var octets = 0
        for scalar in line.unicodeScalars {
            let width = UTF8.width(scalar)
            if octets + width > limit {
                result += "\r\n "
                octets = 1
            }
            result.unicodeScalars.append(scalar)
            octets += width
        }
        return result + "\r\n"
    }
}
