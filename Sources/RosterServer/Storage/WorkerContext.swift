import RosterCore
import RosterRuntime
import RosterCrypto
import RosterStore

/// What one worker thread owns: its own SQLite connection, its hasher for the parameters in force, and its
/// libpwquality settings. Built lazily so that a failure reads as a job's error, not a dead thread. Every
/// worker shares one `writeTurn`: each write transaction runs inside it.
struct WorkerContext {
    let databasePath: String
    let writeTurn: WriteTurn
    private var openedDatabase: Database?
    private var hasher: PasswordHasher?
    private var qualityChecker: PasswordQualityChecker?

    init(databasePath: String, writeTurn: WriteTurn) {
        self.databasePath = databasePath
        self.writeTurn = writeTurn
    }

    mutating func database() throws(StoreError) -> Database {
        if let openedDatabase { return openedDatabase }
        let database = try Database(path: databasePath)
        openedDatabase = database
        return database
    }

    /// A hasher for these parameters; a reload that changed them gets a new one (its set-up costs one hash).
    mutating func hasher(memoryKiB: Int, iterations: Int) throws(CryptoError) -> PasswordHasher {
        if let hasher, hasher.memoryKiB == memoryKiB, hasher.iterations == iterations { return hasher }
        let fresh = try PasswordHasher(memoryKiB: memoryKiB, iterations: iterations)
        hasher = fresh
        return fresh
    }

    mutating func quality() -> PasswordQualityChecker {
        if let qualityChecker { return qualityChecker }
        let checker = PasswordQualityChecker()
        qualityChecker = checker
        return checker
    }
}
