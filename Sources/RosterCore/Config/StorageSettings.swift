/// The `[Storage]`, `[PostgreSQL]` and `[Secrets]` settings: which backend keeps the data, how to reach PostgreSQL,
/// and where the key that seals its secrets is.
/// They are read at start only; a reload that changes them keeps the ones in force (see `DaemonConfig.reloaded`).
public struct StorageSettings: Equatable, Sendable {
    /// The backends the composition root can open; the raw value is `Backend=`'s spelling.
    public enum Backend: String, Equatable, Sendable, CaseIterable {
        /// One host, one file.
        case sqlite
        /// Many daemons sharing one database.
        case postgresql
    }

    /// The contract's default for `[PostgreSQL] Connection=`: the local server's socket, database `roster`.
    public static let defaultConnection = "host=/run/postgresql dbname=roster"
    /// `[PostgreSQL] Connections=`' range: one at least, and few enough that many daemons fit a server's
    /// `max_connections` (100 by default).
    public static let connectionsRange = 1...64
    /// `[PostgreSQL] StatementTimeoutSec=`' range: short enough for a test's outage, and never so long that a
    /// frozen server holds a request for more than minutes.
    public static let statementTimeoutRange = Duration.milliseconds(100)...Duration.seconds(600)

    public var backend: Backend
    /// A libpq conninfo string (`key=value …` or a `postgresql://` URI). It may hold a password: show it only
    /// masked (`Conninfo.masked`).
    public var postgresqlConnection: String
    /// The pool's connections, beside the one that listens for other daemons' changes.
    public var postgresqlConnections: Int
    /// `statement_timeout` on every pool connection; a request unanswered a margin past it counts the server as
    /// gone, and the whole pool as down until a connection is back.
    public var postgresqlStatementTimeout: Duration
    /// `[Secrets] KeyFile=`; nil means `roster.key` beside the SQLite database (where it would be, for PostgreSQL).
    public var keyFilePath: String?

    public init(backend: Backend = .sqlite, postgresqlConnection: String = StorageSettings.defaultConnection,
                postgresqlConnections: Int = 4, postgresqlStatementTimeout: Duration = .seconds(5),
                keyFilePath: String? = nil) {
        self.backend = backend
        self.postgresqlConnection = postgresqlConnection
        self.postgresqlConnections = postgresqlConnections
        self.postgresqlStatementTimeout = postgresqlStatementTimeout
        self.keyFilePath = keyFilePath
    }
}
