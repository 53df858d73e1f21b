/// One end of `rosterd --copy-database`: `sqlite:PATH` or `postgresql:CONNINFO`.
public enum DatabaseEndpoint: Equatable, Sendable, CustomStringConvertible {
    case sqlite(path: String)
    /// A libpq conninfo string (`host=/run/postgresql dbname=roster`) or URI.
    case postgresql(conninfo: String)

    /// Parses `sqlite:PATH` or `postgresql:CONNINFO`; nil for anything else, or an empty path or conninfo.
    public init?(parsing text: String) {
        if text.hasPrefix("sqlite:"), case let path = String(text.dropFirst("sqlite:".count)), !path.isEmpty {
            self = .sqlite(path: path)
        } else if text.hasPrefix("postgresql:"), case let conninfo = String(text.dropFirst("postgresql:".count)),
                  !conninfo.isEmpty {
            self = .postgresql(conninfo: conninfo)
        } else {
            return nil
        }
    }

    /// As it was written, with any password in a conninfo replaced by `***`: this is what reaches the terminal.
    public var description: String {
        switch self {
        case .sqlite(let path): "sqlite:\(path)"
        case .postgresql(let conninfo): "postgresql:\(Self.withoutPassword(conninfo))"
        }
    }

    /// `password=…` (bare or quoted) and a URI's `user:password@` hidden.
    static func withoutPassword(_ conninfo: String) -> String {
        if let scheme = conninfo.range(of: "://"), let at = conninfo[scheme.upperBound...].firstIndex(of: "@"),
           let colon = conninfo[scheme.upperBound..<at].firstIndex(of: ":") {
            return String(conninfo[..<conninfo.index(after: colon)]) + "***" + String(conninfo[at...])
                .replacingPasswordParameter()
        }
        return conninfo.replacingPasswordParameter()
    }
}

private extension String {
    /// Every `password=value` (key/value form) or `password=` query parameter with its value as `***`.
    func replacingPasswordParameter() -> String {
        var out = ""
        var rest = Substring(self)
        while let found = rest.range(of: "password=") {
            out += rest[..<found.upperBound] + "***"
            rest = rest[found.upperBound...]
            if rest.first == "'" {
                // A quoted value ends at the next unescaped quote.
                var index = rest.index(after: rest.startIndex)
                while index < rest.endIndex, rest[index] != "'" {
                    if rest[index] == "\\" { index = rest.index(after: index) }
                    if index < rest.endIndex { index = rest.index(after: index) }
                }
                rest = index < rest.endIndex ? rest[rest.index(after: index)...] : ""
            } else {
                rest = rest.drop { $0 != " " && $0 != "&" }
            }
        }
        return out + rest
    }
}
