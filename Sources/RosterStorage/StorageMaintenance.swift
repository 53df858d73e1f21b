import RosterCore
import RosterRuntime

/// What the daemon does with its storage as a whole: start and stop, reload budgets, prune, back up, report.
public protocol StorageMaintenance: AnyObject {
    /// Called once the daemon is ready: warm what is kept in memory (the username directory). Until that is
    /// done, answers still come, from the database.
    func warmUp()

    /// The budgets in force from now on (a configuration reload).
    func apply(_ settings: ServerSettings)

    /// Drops failed log-ins older than `failureWindowMs` and tokens idle for longer than `tokenIdleMs`.
    func pruneExpired(failureWindowMs: Int64, tokenIdleMs: Int64)

    /// Counts and queue figures for `admin.stats` and the status line.
    func statistics(completion: @escaping StorageCompletion<StorageStatistics>)

    /// Stops the backend's workers; calls made after it answer `.unavailable`.
    func stop()

    /// The daemon's last call, after its loop ended: `stop`, then wait for the work in hand and close, recording a
    /// clean shutdown where the backend keeps one (SQLite's next start then skips quick_check).
    func finish()
}

/// An online copy of the whole database, made for whoever asked (an administrator's connection): a backend that
/// queues the copy charges it to the payer its view was bound to (`Storage.acting(for:)`).
public protocol BackupStorage {
    /// An online copy to `path`, which must name nothing yet. One at a time: a second answers `.busy`.
    func backup(to path: String, completion: @escaping (Result<BackupSummary, BackupFailure>) -> Void)
}

/// What a finished backup holds, for the admin's answer.
public struct BackupSummary: Equatable, Sendable {
    public let path: String
    public let pages: Int
    public let bytes: Int64

    public init(path: String, pages: Int, bytes: Int64) {
        self.path = path
        self.pages = pages
        self.bytes = bytes
    }
}

/// Why a backup refused its target before writing anything. The raw value is stable: it is the `reason` a
/// client sees.
public enum BackupRefusal: String, Error, Equatable, Sendable, CaseIterable {
    /// Something exists at the path already; a backup never replaces a file (as SQLite's `VACUUM INTO`).
    case targetExists = "target_exists"
    /// The path names a directory, a device, a socket, a FIFO or a dangling symlink.
    case notARegularFile = "not_a_regular_file"
    /// The path is the live database, its `-wal`, `-shm` or `-journal`, or its lock, by name or by inode.
    case liveDatabase = "live_database"
    /// The path's directory does not exist, is not a directory, or no file can be created in it.
    case badDirectory = "bad_directory"
}

/// Why `backup` did not publish a copy.
public enum BackupFailure: Error, Equatable, Sendable {
    /// The target was refused; nothing was written.
    case refused(BackupRefusal)
    /// The copy failed (and its partial file was removed), or the queue refused it.
    case storage(StorageFailure)
}

/// Figures a backend reports; `queues` names each of its worker queues (`storage` for SQLite).
public struct StorageStatistics: Equatable, Sendable {
    public var accounts: Int
    public var contacts: Int
    /// `loading`, `ready` or `failed`: whether username checks are answered from memory yet.
    public var usernameDirectory: String
    public var queues: [String: WorkerPoolStats]
    /// Which backend, and whether it is connected.
    public var state: StorageState
    /// The outbox by status, counted with the rest; nil when it could not be counted yet.
    public var mail: MailCounts?

    public init(accounts: Int, contacts: Int, usernameDirectory: String, queues: [String: WorkerPoolStats],
                state: StorageState, mail: MailCounts? = nil) {
        self.accounts = accounts
        self.contacts = contacts
        self.usernameDirectory = usernameDirectory
        self.queues = queues
        self.state = state
        self.mail = mail
    }
}
