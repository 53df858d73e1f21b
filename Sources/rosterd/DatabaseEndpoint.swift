import RosterCore

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

    /// As it was written, with any password in a conninfo masked: this is what reaches the terminal.
    public var description: String {
        switch self {
        case .sqlite(let path): "sqlite:\(path)"
        case .postgresql(let conninfo): "postgresql:\(Conninfo.masked(conninfo))"
        }
    }
}
