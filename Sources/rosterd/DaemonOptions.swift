import RosterCore
import RosterRuntime

/// rosterd's command line, parsed without touching the system so that it can be tested.
public struct DaemonOptions: Equatable, Sendable {
    /// What the process should do.
    public enum Mode: Equatable, Sendable {
        case serve
        case help
        case version
        /// Load and check the configuration, print the verdict, exit 0 or 1.
        case checkConfig
        /// Copy the database to this path (offline) and exit.
        case backup(String)
        /// Copy every row of one database into another, empty one (offline), and exit.
        case copyDatabase(from: DatabaseEndpoint, to: DatabaseEndpoint)
    }

    public var mode: Mode = .serve
    public var socketPath: String?
    public var databasePath: String?
    public var configPath: String?
    public var logLevel: LogLevel?

    public init() {}

    /// A usage mistake, reported on stderr with exit status 2.
    public struct UsageError: Error, CustomStringConvertible {
        public let description: String
    }

    public static func parse(_ arguments: [String]) throws(UsageError) -> DaemonOptions {
        var options = DaemonOptions()
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            var name = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            func value() throws(UsageError) -> String {
                if let inlineValue { return inlineValue }
                guard let next = rest.popFirst(), !next.isEmpty else { throw UsageError(description: "\(name) needs a value") }
                return next
            }
            switch name {
            case "-h", "--help": options.mode = .help
            case "--version": options.mode = .version
            case "--check-config": options.mode = .checkConfig
            case "--backup": options.mode = .backup(try value())
            case "--copy-database":
                let from = try endpoint(try value())
                guard let next = rest.popFirst() else { throw UsageError(description: "--copy-database needs FROM and TO") }
                options.mode = .copyDatabase(from: from, to: try endpoint(next))
            case "--socket": options.socketPath = try value()
            case "--database": options.databasePath = try value()
            case "--config": options.configPath = try value()
            case "--log-level":
                let text = try value()
                guard let level = LogLevel(parsing: text) else {
                    throw UsageError(description: "--log-level: unknown level '\(text)' (use err, warning, notice, info or debug)")
                }
                options.logLevel = level
            default:
                throw UsageError(description: "unknown option '\(argument)'; see rosterd --help")
            }
        }
        return options
    }

    private static func endpoint(_ text: String) throws(UsageError) -> DatabaseEndpoint {
        guard let endpoint = DatabaseEndpoint(parsing: text) else {
            throw UsageError(description: "--copy-database: '\(text)' is neither sqlite:PATH nor postgresql:CONNINFO")
        }
        return endpoint
    }

    public static let helpText = """
        rosterd [OPTIONS...]

        The Roster daemon: owns the user database and every user's contacts, and serves
        newline-delimited JSON-RPC on a Unix socket.

          -h --help              Show this help and exit
             --version           Show the version and exit
             --check-config      Check the configuration files and exit (0 good, 1 refused)
             --backup PATH       Copy the database to PATH (checked with integrity_check) and exit
             --copy-database FROM TO
                                 Copy every account, token, failed log-in, contact, recovery code,
                                 TOTP secret (still sealed) and audit entry from FROM into TO, each
                                 sqlite:PATH or postgresql:CONNINFO, and exit; TO
                                 must be empty (a missing file is created); an SQLite file that
                                 a daemon serves is refused

        Paths:
             --socket PATH       Listen on PATH (default: $ROSTER_SOCKET, else /run/roster/roster.sock
                                 as root, else $XDG_RUNTIME_DIR/roster/roster.sock)
             --database PATH     Keep the database at PATH (default: $ROSTER_DATABASE, else
                                 /var/lib/roster/roster.db as root, else $XDG_STATE_HOME/roster/roster.db)
             --config PATH       Read this configuration file (and PATH.d/*.conf) instead of
                                 /etc/roster/rosterd.conf and its drop-in directories

        Logging:
             --log-level LEVEL   emerg, alert, crit, err, warning, notice, info (default) or debug

        See protocol.md for the wire format.
        """
}
