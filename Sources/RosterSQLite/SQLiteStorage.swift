import RosterCore
import RosterRuntime
import RosterStorage

/// The SQLite backend of `Storage`: one database file, served by this daemon alone.
///
/// Theory of operation. The loop owns one connection for point reads (a username, an email, an account, its
/// credential, failure times): prepared statements answer in microseconds, so those calls answer before they
/// return, and a username check is answered from the in-memory `UsernameDirectory` once `warmUp` has filled it.
/// Everything that writes, or reads many rows, runs on the storage workers (`WorkerPool`, the daemon's own
/// priority), each with its own connection, charged to whoever asked (the `QueueCharge` the caller's view was
/// bound to by `acting(for:)`) and refused as `.busy` past a budget, except where the protocol says never; every
/// write transaction takes its turn at SQLite's one write lock (`WriteTurn`) and commits (WAL, synchronous=FULL)
/// before it is answered. One user's contact writes, imports, exports and index loads run one at a time in the
/// order they were asked (`QueueOrder.contacts`), so an index holds exactly the writes answered before it. An
/// audited write commits its audit entry in its own transaction (`auditedWrite`), and the loop tells `onAudit` of
/// it before answering. Every completion runs on the loop thread. Stored times come from the injected `WallClock`.
public final class SQLiteStorage: Storage {

    let loop: EventLoop
    let clock: any WallClock
    let logger: Logger
    /// The database file, as the daemon was told it.
    public let path: String
    /// The loop's own connection, for point reads only.
    let users: UserStore
    let failures: LoginFailureStore
    let contactRows: ContactStore
    let workers: WorkerPool<StorageWorker>
    public internal(set) var usernames = UsernameDirectory()
    private var lock: DatabaseLock?
    private var warming = false
    private var backupTurn = BackupTurn()
    private(set) var stopped = false
    public var isStopped: Bool { stopped }
    /// This daemon is the file's only writer, so nobody else changes it; the feed stays silent.
    public var onChange: ((StorageChange) -> Void)?
    public var onStateChange: ((StorageState) -> Void)?
    public var onAudit: ((AuditEntry, AuditOrigin) -> Void)?
    /// A file is up from the moment it is open.
    public let state: StorageState
    /// The integrity check this start ran on the file.
    public let startCheck: StartCheck

    private init(path: String, database: Database, lock: DatabaseLock, loop: EventLoop, workers: WorkerPool<StorageWorker>,
                 clock: any WallClock, logger: Logger, startCheck: StartCheck) {
        self.path = path
        self.startCheck = startCheck
        self.users = UserStore(database: database)
        self.failures = LoginFailureStore(database: database)
        self.contactRows = ContactStore(database: database)
        self.lock = lock
        self.loop = loop
        self.workers = workers
        self.clock = clock
        self.logger = logger
        self.state = StorageState(backend: "sqlite", phase: .up, sinceMs: clock.nowMs())
    }

    deinit { workers.stop() }

    /// Opens the database at `path` for `loop` (whose thread must be the caller's), as the daemon starts: the file
    /// must be writable and Roster's (or empty, or adoptable) before anything is created beside it; then the
    /// `DatabaseLock` is taken (one daemon per database), backup partials left by dead processes are removed (each
    /// logged), the file passes `quick_check`, is migrated, and the storage workers start (`StorageWorkers=`, at
    /// least two, `settings`' storage budget). Each refusal leaves the file as it was.
    /// With `keyCheck`, the file must have been first served with the same key (the first daemon stores its check
    /// value), or it is refused naming the key file and the database.
    public static func open(path: String, loop: EventLoop, settings: ServerSettings, cores: Int, clock: any WallClock,
                            logger: Logger, keyCheck: KeyCheck? = nil) throws(SQLiteStorageOpenFailure) -> SQLiteStorage {
        try open(path: path, loop: loop, settings: settings, cores: cores, clock: clock, logger: logger, sparePages: nil,
                 keyCheck: keyCheck)
    }

    /// `sparePages`: a test's full disk, `PRAGMA max_page_count` on every connection this many pages above the
    /// file's size at open.
    static func open(path: String, loop: EventLoop, settings: ServerSettings, cores: Int, clock: any WallClock,
                     logger: Logger, sparePages: Int?, keyCheck: KeyCheck? = nil) throws(SQLiteStorageOpenFailure)
        -> SQLiteStorage {
        do throws(StoreError) {
            try RosterSchema.preflight(path: path)
        } catch {
            throw .store(error)
        }
        let lock: DatabaseLock
        do throws(DatabaseLock.Failure) {
            lock = try DatabaseLock.acquire(databasePath: path)
        } catch {
            throw .lock(error)
        }
        for name in Database.removeStaleBackupPartials(besideDatabaseAt: path) {
            logger.notice("removed \(name), a backup's partial file left by a process that died")
        }
        let database: Database
        let check: StartCheck
        var pageLimit: Int?
        do throws(StoreError) {
            (database, check) = try RosterSchema.openChecked(path: path, now: clock.nowMs())
            logger.info("database checked at start: \(check.rawValue)", [("ROSTER_DATABASE_CHECK", check.rawValue)])
            if let sparePages {
                let limit = Int(try database.pragmaValue("PRAGMA page_count") ?? "0").map { $0 + sparePages } ?? sparePages
                try database.execute("PRAGMA max_page_count = \(limit)")
                pageLimit = limit
            }
        } catch {
            throw .store(error)
        }
        if let keyCheck {
            do throws(SQLiteStorageOpenFailure) {
                try checkKey(keyCheck, in: database, path: path, now: clock.nowMs(), logger: logger)
            } catch {
                database.close()
                throw error
            }
        }
        let writeTurn = WriteTurn()
        let workerPageLimit = pageLimit
        // Two threads at least, so a long export or backup leaves one for everyone else's writes.
        let workers = WorkerPool(threads: settings.storageWorkers > 0 ? settings.storageWorkers : max(2, cores),
                                 budget: settings.storageBudget, priority: .normal, typicalJob: .milliseconds(5)) {
            StorageWorker(databasePath: path, writeTurn: writeTurn, pageLimit: workerPageLimit)
        }
        return SQLiteStorage(path: path, database: database, lock: lock, loop: loop, workers: workers, clock: clock,
                             logger: logger, startCheck: check)
    }

    /// Stores `keyCheck`'s value if the file has none yet (the first daemon, or a file from before the check),
    /// then compares the stored value with it. A file without a value that holds sealed TOTP secrets already is
    /// adopted only by a key that opens one.
    private static func checkKey(_ keyCheck: KeyCheck, in database: Database, path: String, now: Int64,
                                 logger: Logger) throws(SQLiteStorageOpenFailure) {
        let stored: String?
        var unopened = false
        do throws(StoreError) {
            if try database.pragmaValue("SELECT value FROM key_check WHERE id = 1") == nil {
                let sealed = try database.prepare("SELECT coalesce(sealed, pending) FROM totp LIMIT 1")
                if try sealed.step() { unopened = !keyCheck.opensSealed(sealed.blob(at: 0)) }
                sealed.reset()
            }
        } catch {
            throw .store(error)
        }
        guard !unopened else { throw .keyMismatch(keyFile: keyCheck.keyFile, path: path) }
        do throws(StoreError) {
            let insert = try database.prepare("INSERT INTO key_check(id, value, created_ms) VALUES (1, ?, ?) ON CONFLICT(id) DO NOTHING")
            try insert.bind(keyCheck.value, at: 1)
            try insert.bind(now, at: 2)
            try insert.run()
            if database.changes > 0 {
                logger.notice("the database \(path) now keeps the check value of the key file \(keyCheck.keyFile); "
                              + "move or restore the two together")
            }
            stored = try database.pragmaValue("SELECT value FROM key_check WHERE id = 1")
        } catch {
            throw .store(error)
        }
        guard stored == keyCheck.value else { throw .keyMismatch(keyFile: keyCheck.keyFile, path: path) }
    }

    /// Lets a test open a second `SQLiteStorage` on the file while this one still runs, as after a crash.
    func releaseLock() {
        lock?.release()
        lock = nil
    }

    // MARK: Running work

    /// Runs `job` on a storage worker and answers on the loop; `force` where the protocol says a call is never
    /// refused by a budget.
    func work<T: Sendable>(_ charge: QueueCharge, order: QueueOrder? = nil, force: Bool = false,
                           _ job: @escaping @Sendable (inout StorageWorker) -> Result<T, StorageFailure>,
                           completion: @escaping StorageCompletion<T>) {
        guard !stopped else { return completion(.failure(StorageFailure.stopped)) }
        workers.run(on: loop, charge: charge, order: order, force: force, job, refused: { .busy(retryAfterMs: $0) },
                    completion: completion)
    }

    /// `body` on a worker's connection, answered on the loop; a failure is logged as `operation` and mapped.
    func workerRead<T: Sendable>(_ charge: QueueCharge, _ operation: String,
                                 _ body: @escaping @Sendable (Database) throws(StoreError) -> T,
                                 completion: @escaping StorageCompletion<T>) {
        let logger = self.logger
        work(charge, { worker in
            do throws(StoreError) {
                return .success(try body(try worker.database()))
            } catch {
                return .failure(error.storageFailure(logging: logger, operation))
            }
        }, completion: completion)
    }

    /// A point read on the loop's connection, answered before the call returns.
    func read<T>(_ what: String, _ completion: StorageCompletion<T>, _ body: () throws(StoreError) -> T) {
        guard !stopped else { return completion(.failure(StorageFailure.stopped)) }
        do {
            completion(.success(try body()))
        } catch {
            logger.error("\(what) failed: \(error)")
            completion(.failure(.other))
        }
    }

    // MARK: StorageMaintenance

    /// Fills the username directory from a worker's snapshot, once; checks are answered from the database meanwhile.
    public func warmUp() {
        guard !stopped, !warming else { return }
        warming = true
        let logger = self.logger
        let started = loop.now
        work(.daemon, force: true, { worker in
            do throws(StoreError) {
                return .success(try UserStore(database: try worker.database()).allCanonicalUsernames())
            } catch {
                logger.error("cannot read usernames into memory; the database answers every check: \(error)")
                return .failure(.other)
            }
        }, completion: { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let names):
                self.usernames.fill(with: names)
                let elapsed = (self.loop.now - started).nanoseconds / 1_000_000
                self.logger.info("\(names.count) username(s) in memory, read in \(elapsed) ms")
            case .failure:
                self.usernames.fillFailed()
            }
        })
    }

    public func apply(_ settings: ServerSettings) {
        workers.budget = settings.storageBudget
    }

    public func pruneExpired(failureWindowMs: Int64, tokenIdleMs: Int64) {
        guard !stopped else { return }
        let clock = self.clock
        let logger = self.logger
        _ = workers.submit(.daemon, force: true) { worker in
            do throws(StoreError) {
                let database = try worker.database()
                let now = clock.nowMs()
                try worker.writeTurn.take { () throws(StoreError) in
                    try LoginFailureStore(database: database).prune(olderThan: Saturating.subtract(now, failureWindowMs))
                    try SessionTokenStore(database: database).purgeExpired(now: now, idleLimitMs: tokenIdleMs)
                }
            } catch {
                logger.error("pruning expired log-in failures and tokens failed: \(error)")
            }
        }
    }

    /// An online copy made by a worker's own connection while the loop keeps serving. One at a time: each holds a
    /// worker and reads the whole file for seconds, so a second one is told to come back (`busy`).
    public func backup(to path: String, charge: QueueCharge,
                completion: @escaping (Result<BackupSummary, BackupFailure>) -> Void) {
        guard !stopped else { return completion(.failure(.storage(StorageFailure.stopped))) }
        if let refusal = backupTurn.take() { return completion(.failure(refusal)) }
        let logger = self.logger
        workers.run(on: loop, charge: charge, { (worker: inout StorageWorker) -> Result<BackupSummary, BackupFailure> in
            do throws(BackupError) {
                let database: Database
                do throws(StoreError) { database = try worker.database() } catch { throw .store(error) }
                return .success(try database.backup(to: path))
            } catch {
                return .failure(error.backupFailure(logging: logger, path: path))
            }
        }, refused: { .storage(.busy(retryAfterMs: $0)) }, completion: { [weak self] result in
            self?.backupTurn.release()
            completion(result)
        })
    }

    /// Answered at once: the directory's count (else a COUNT), a COUNT of contacts, and the workers' figures. A
    /// count that fails is logged and shown as 0: the figures are for a status line, and the queues' still are.
    public func statistics(completion: @escaping StorageCompletion<StorageStatistics>) {
        guard !stopped else { return completion(.failure(StorageFailure.stopped)) }
        let accounts = usernames.count ?? count("accounts") { () throws(StoreError) in try users.userCount() }
        let contacts = count("contacts") { () throws(StoreError) in try contactRows.totalCount() }
        let mail: MailCounts?
        do {
            mail = try MailStore(database: users.database).counts()
        } catch {
            logger.error("counting the outbox for the statistics failed: \(error)")
            mail = nil
        }
        completion(.success(StorageStatistics(accounts: accounts, contacts: contacts,
                                              usernameDirectory: usernames.phase.rawValue,
                                              queues: ["storage": workers.stats], state: state, mail: mail)))
    }

    private func count(_ what: String, _ read: () throws(StoreError) -> Int) -> Int {
        do {
            return try read()
        } catch {
            logger.error("counting \(what) for the statistics failed: \(error)")
            return 0
        }
    }

    /// The workers finish what is queued, then end; every call from now on answers `StorageFailure.stopped`.
    public func stop() {
        stopped = true
        workers.stop()
    }

    /// Lets the workers finish what is queued and waits for them, closes the last connection (which folds the WAL
    /// into the file and removes it), and leaves the mark of a clean shutdown, so the next start may skip
    /// quick_check (see `CleanShutdown`).
    public func finish() {
        stop()
        workers.stopAndWait()
        users.database.close()
        let files = DatabaseFiles(path: path)
        if CleanShutdown.record(files) {
            logger.info("database closed cleanly: the next start skips quick_check")
        } else {
            logger.notice("database closed, but its clean shutdown could not be recorded: the next start runs quick_check")
        }
        lock?.release()
        lock = nil
    }
}

/// Why `SQLiteStorage.open` refused to serve a database. Its description is the inner failure's, for the log.
public enum SQLiteStorageOpenFailure: Error, CustomStringConvertible {
    /// The file was refused (`StoreError.refused`), or SQLite failed to open or migrate it.
    case store(StoreError)
    /// Another daemon serves it, or the lock file could not be taken.
    case lock(DatabaseLock.Failure)
    /// The file was first served with another key file than `keyFile`: its TOTP secrets and recovery codes would
    /// not open with this one.
    case keyMismatch(keyFile: String, path: String)

    public var description: String {
        switch self {
        case .store(let error): error.description
        case .lock(let failure): failure.description
        case .keyMismatch(let keyFile, let path):
            "the key file \(keyFile) is not the one the database \(path) was first served with; its TOTP secrets and "
                + "recovery codes need that key: put the database's own key file there, or name it in [Secrets] "
                + "KeyFile= (refused) [key_mismatch]"
        }
    }
}
