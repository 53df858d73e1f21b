/// The `[Server]` and `[Hashing] Workers=/QueueLimit=` settings: the daemon's resources rather than the forms' rules.
///
/// Queued work is charged to the connection that asked and to its user (the peer uid before a log-in),
/// on each of the two worker lanes: hashing (Argon2id) and storage (everything else that leaves the loop).
public struct ServerSettings: Equatable, Sendable {
    /// `Socket=`; nil means the contract's default (`--socket`, `$ROSTER_SOCKET`, the per-user or system path).
    public var socketPath: String?
    /// `Database=`; nil means the contract's default, as for `socketPath`.
    public var databasePath: String?
    public var logLevel: LogLevel
    /// The longest request line; a longer one is answered `request_too_large` and skipped (protocol.md "Framing").
    public var maxLineBytes: Int
    /// The longest request line of a logged-in session (a contact card with a 1 MiB photo); never below
    /// `maxLineBytes`.
    public var maxSessionLineBytes: Int
    /// What all connections' unfinished lines beyond `maxLineBytes` may hold together; a line that would pass it
    /// is answered `busy` and skipped, so many big lines cannot exhaust the daemon's memory.
    public var maxHeldLineBytes: Int = 64 << 20
    public var maxConnections: Int
    /// `MaxConnectionsPerUser=`, counted by the peer's SO_PEERCRED uid.
    public var maxConnectionsPerUID: Int
    /// How long a partial request line may sit unfinished before the connection is closed.
    public var idleLineTimeout: Duration
    /// Past this much unsent output a connection is coalesced (only the latest state per field is kept).
    public var outputSoftLimitBytes: Int
    /// Past this much unsent output, even after coalescing, the connection is cut off.
    public var outputHardLimitBytes: Int
    /// How long a connection above the soft limit may make no progress before it is cut off.
    public var outputStallTimeout: Duration
    /// Past this much unsent output the connection's requests are no longer read (back-pressure), until it drains
    /// to `outputResumeBytes`; `readPauseBytes` is what applies.
    public var outputPauseBytes: Int
    /// The low-water mark at which a connection paused by `outputPauseBytes` is read again.
    public var outputResumeBytes: Int
    /// Requests of one connection read and not yet answered; at this many its requests are no longer read.
    public var maxRequestsInFlight: Int
    /// Unsent output of all connections together; past it, the connections holding output are no longer read
    /// and a request for a big answer is `busy`.
    public var outputBudgetBytes: Int
    /// As `outputBudgetBytes`, for the connections of one peer uid.
    public var outputBudgetPerUIDBytes: Int
    /// Argon2id worker threads; 0 means one per core.
    public var hashWorkers: Int
    /// Hash jobs queued (waiting or running) in all; beyond it requests get `busy`.
    public var hashQueueLimit: Int
    /// Storage worker threads (durable writes, reads, imports, exports); 0 means one per core, at least 2.
    public var storageWorkers: Int
    /// Storage jobs queued in all.
    public var maxQueuedJobs: Int
    /// Jobs one user (or, before a log-in, one peer uid) may have queued on a lane.
    public var maxQueuedJobsPerUser: Int
    /// Jobs one connection may have queued on a lane.
    public var maxQueuedJobsPerConnection: Int
    /// Bytes of import data queued in all; one import larger than this alone still waits its turn.
    public var maxQueuedImportBytes: Int
    /// Bytes of import data one user may have queued; one larger import alone still waits its turn.
    public var maxQueuedImportBytesPerUser: Int
    /// `GatewayUsers=`: besides root and the daemon's own user, who may say in `session.hello` `remote` whom a
    /// connection speaks for (roster-web). Resolved to uids by the daemon, at start and at each reload.
    public var gatewayUsers: [GatewayUser]

    public init(socketPath: String? = nil,
                databasePath: String? = nil,
                logLevel: LogLevel = .info,
                maxLineBytes: Int = 65_536,
                maxSessionLineBytes: Int = 2 << 20,
                maxConnections: Int = 4096,
                maxConnectionsPerUID: Int = 1024,
                idleLineTimeout: Duration = .seconds(60),
                outputSoftLimitBytes: Int = 8 << 20,
                outputHardLimitBytes: Int = 32 << 20,
                outputStallTimeout: Duration = .seconds(60),
                outputPauseBytes: Int = 1 << 20,
                outputResumeBytes: Int = 256 << 10,
                maxRequestsInFlight: Int = 64,
                outputBudgetBytes: Int = 256 << 20,
                outputBudgetPerUIDBytes: Int = 64 << 20,
                hashWorkers: Int = 0,
                hashQueueLimit: Int = 64,
                storageWorkers: Int = 0,
                maxQueuedJobs: Int = 4096,
                maxQueuedJobsPerUser: Int = 64,
                maxQueuedJobsPerConnection: Int = 32,
                maxQueuedImportBytes: Int = 64 << 20,
                maxQueuedImportBytesPerUser: Int = 16 << 20,
                gatewayUsers: [GatewayUser] = [.name("roster-web")]) {
        self.socketPath = socketPath
        self.databasePath = databasePath
        self.logLevel = logLevel
        self.maxLineBytes = maxLineBytes
        self.maxSessionLineBytes = maxSessionLineBytes
        self.maxConnections = maxConnections
        self.maxConnectionsPerUID = maxConnectionsPerUID
        self.idleLineTimeout = idleLineTimeout
        self.outputSoftLimitBytes = outputSoftLimitBytes
        self.outputHardLimitBytes = outputHardLimitBytes
        self.outputStallTimeout = outputStallTimeout
        self.outputPauseBytes = outputPauseBytes
        self.outputResumeBytes = outputResumeBytes
        self.maxRequestsInFlight = maxRequestsInFlight
        self.outputBudgetBytes = outputBudgetBytes
        self.outputBudgetPerUIDBytes = outputBudgetPerUIDBytes
        self.hashWorkers = hashWorkers
        self.hashQueueLimit = hashQueueLimit
        self.storageWorkers = storageWorkers
        self.maxQueuedJobs = maxQueuedJobs
        self.maxQueuedJobsPerUser = maxQueuedJobsPerUser
        self.maxQueuedJobsPerConnection = maxQueuedJobsPerConnection
        self.maxQueuedImportBytes = maxQueuedImportBytes
        self.maxQueuedImportBytesPerUser = maxQueuedImportBytesPerUser
        self.gatewayUsers = gatewayUsers
    }

    /// Where reading stops: never above the soft limit, so a paused peer is not also one about to be cut off.
    public var readPauseBytes: Int { min(outputPauseBytes, outputSoftLimitBytes) }

    /// Where reading resumes: at most half the pause mark, so a connection does not flap around one value.
    public var readResumeBytes: Int { min(outputResumeBytes, readPauseBytes / 2) }

    /// The largest single answer queued; a larger one is replaced by `answer_too_large`. Half the hard limit
    /// leaves room for the events and answers already waiting beside it.
    public var maxAnswerBytes: Int { outputHardLimitBytes / 2 }
}
