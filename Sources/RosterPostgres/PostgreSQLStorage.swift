import RosterCore
import RosterRuntime
import RosterStorage

/// Where rosterd finds its PostgreSQL: `[PostgreSQL] Connection=` (a libpq conninfo), `Connections=` and
/// `StatementTimeoutSec=`.
public struct PostgreSQLSettings: Sendable {
    public var conninfo: String
    public var connections: Int
    /// The pool's `statement_timeout`; its requests' deadline is a margin past it (`PGPoolSettings.timing`).
    public var statementTimeoutMs: Int

    public init(conninfo: String = "host=/run/postgresql dbname=roster", connections: Int = 4,
                statementTimeoutMs: Int = 5_000) {
        self.conninfo = conninfo
        self.connections = connections
        self.statementTimeoutMs = statementTimeoutMs
    }
}

/// The PostgreSQL backend of `Storage`: one database shared by any number of rosterd.
///
/// Theory of operation. Every call is one or a few statements sent through the pool (`PGPool`), which drives
/// libpq on the loop without blocking it and answers on the loop; the pool's budget, charged to the payer the
/// caller's view was bound to (`acting(for:)`), refuses work past it as `.busy`, and while no connection is up
/// every call answers `.unavailable` at once. A write is answered only
/// once committed. Writes that other daemons must hear of (an account, a revoked token, a user's contacts) carry
/// a `pg_notify` in the same statement, as does every audit entry; the dedicated LISTEN connection (`PGListener`)
/// hears the others' and reports them through `onChange` (entries through `onAudit`), dropping this instance's own
/// echoes by their origin id. A username check is
/// answered from the in-memory `UsernameDirectory` once `warmUp` has read it in pages; it follows this daemon's
/// registrations and the others' notifications, and after the listener reconnects (notifications sent meanwhile
/// are lost) it is read again before `.resync` is reported. CPU work (index builds, encoding, import parsing and
/// search keys, filling an export's sink) runs on a small worker pool of its own, never on the loop. One user's
/// contact writes, imports, exports and index loads run one at a time in the order asked (`ContactTurns`).
/// Stored times are the database's clock, or the injected test clock (`PostgreSQLQueries.now`).
public final class PostgreSQLStorage: Storage {
    /// A hint for a client told to come back when the database is slow or gone.
    static let retryAfterMs: Int64 = 1_000
    /// Each statement of a backup reads one page of a cursor: a minute without an answer is a server gone.
    static let backupStatementTimeoutMs = 60_000
    /// Usernames read per page while the directory fills: a page's rows are parsed on the loop, so it stays
    /// small enough to be a millisecond or two there, at a million accounts a few hundred round trips.
    static let directoryPage = 5_000
    /// Contacts read per round trip while an export page is written.
    static let exportChunk = 1_000
    /// Up to this many contacts of a read are encoded on the loop (a typed search's page, well under a
    /// millisecond) instead of waiting for a worker.
    static let loopEncodeLimit = 100
    /// Rows per INSERT of an import (13 parameters each, well inside the protocol's 65,535).
    static let insertChunk = 500

    let loop: EventLoop
    let logger: Logger
    /// nil: the database's clock; a test's manual clock otherwise.
    let clock: (any WallClock)?
    /// For `state.sinceMs`, the daemon's own clock.
    let wallClock: any WallClock
    let pool: PGPool
    let listener: PGListener
    /// CPU work of the calls, off the loop.
    let cpu: WorkerPool<Void>
    let contactTurns: ContactTurns
    /// This instance's random id, in every notification it sends, so that its listener drops the echoes.
    let origin: String
    /// For a backup's own connection, which reads the whole database in one snapshot, off the pool.
    private let conninfo: String
    /// Writes `admin.backup`'s snapshot (a SQLite file); nil only for a storage a test opened without one.
    private let snapshots: (any SnapshotWriter)?
    private var backupTurn = BackupTurn()
    public internal(set) var usernames = UsernameDirectory()
    /// Whether `warmUp` asked for the directory; before that, a reconnect has nothing to refill.
    private var directoryWanted = false
    /// Bumped by every fill, so that the pages of a fill overtaken by a newer one are dropped.
    private var fillGeneration = 0
    /// The names a fill has read so far; held here, not passed from page to page, so that adding a page never
    /// copies the set (a million names would be copied at every page).
    private var snapshot: Set<String> = []
    private var listenedBefore = false
    /// The last counts read, which `statistics` answers: it never waits for the database.
    private var lastCounts = (accounts: 0, contacts: 0, mail: MailCounts?.none)
    /// Called when the count in flight for `lastCounts` answers; non-nil while one is in flight, which is one at a
    /// time however often `admin.stats` is asked.
    private var countWaiters: [() -> Void]?
    /// How long `statistics` waits for a fresh count before it answers with the last one: a healthy server counts
    /// in a millisecond or two, and a frozen one must not hold `admin.stats`.
    static let statisticsWait: Duration = .milliseconds(200)
    private(set) var stopped = false
    public var isStopped: Bool { stopped }

    public var onChange: ((StorageChange) -> Void)?
    public var onStateChange: ((StorageState) -> Void)?
    public var onAudit: ((AuditEntry, AuditOrigin) -> Void)?
    public private(set) var state: StorageState

    private init(settings: PostgreSQLSettings, loop: EventLoop, server: ServerSettings, cores: Int,
                 clock: (any WallClock)?, logger: Logger, snapshots: (any SnapshotWriter)?) {
        self.loop = loop
        self.conninfo = settings.conninfo
        self.snapshots = snapshots
        self.logger = logger
        self.clock = clock
        self.wallClock = clock ?? SystemWallClock()
        var poolSettings = PGPoolSettings(conninfo: settings.conninfo, connections: settings.connections)
        poolSettings.statementTimeoutMs = settings.statementTimeoutMs
        poolSettings.queueLimit = server.maxQueuedJobs
        pool = PGPool(settings: poolSettings, loop: loop, logger: logger)
        listener = PGListener(conninfo: settings.conninfo, channels: [ChangeNotification.channel], loop: loop, logger: logger)
        // Two threads at most: the work is short and bursty, and the loop and the hashers need the cores.
        cpu = WorkerPool(threads: max(1, min(2, cores)), budget: server.storageBudget, priority: .normal,
                         typicalJob: .milliseconds(1)) { () }
        contactTurns = ContactTurns(limitPerUser: server.maxQueuedJobsPerUser)
        origin = ChangeNotification.hex((0..<8).map { _ in UInt8.random(in: 0...255) })
        state = StorageState(backend: "postgresql", phase: pool.phase, sinceMs: wallClock.nowMs())
    }

    deinit {
        cpu.stop()
    }

    /// Connects (blocking, within the conninfo's `connect_timeout`), refuses a database that is not Roster's,
    /// migrates it under an advisory lock, then starts the pool and the listener, which connect in the
    /// background. Before the loop serves only. `snapshots` writes `admin.backup`'s copy.
    /// With `keyCheck`, the database must have been first served with the same key (the first daemon stores its
    /// check value), or it is refused naming the key file and the database.
    public static func open(settings: PostgreSQLSettings, loop: EventLoop, server: ServerSettings, cores: Int,
                            clock: (any WallClock)?, logger: Logger, keyCheck: KeyCheck? = nil,
                            snapshots: (any SnapshotWriter)? = nil) throws(PostgreSQLOpenFailure) -> PostgreSQLStorage {
        let connection: PGBlockingConnection
        do throws(PGFailure) {
            connection = try PGBlockingConnection(conninfo: settings.conninfo)
        } catch {
            throw .cannotConnect(conninfo: Conninfo.masked(settings.conninfo), error)
        }
        defer { connection.close() }
        do throws(PostgreSQLMigrator.Failure) {
            let applied = try PostgreSQLMigrator.migrate(connection, now: clock.map { .int($0.nowMs()) } ?? .null)
            if !applied.isEmpty { logger.notice("PostgreSQL schema migrated: \(applied.joined(separator: ", "))") }
        } catch {
            throw PostgreSQLOpenFailure(error)
        }
        if let keyCheck {
            try checkKey(keyCheck, on: connection, conninfo: settings.conninfo, now: clock.map { .int($0.nowMs()) } ?? .null,
                         logger: logger)
        }
        let storage = PostgreSQLStorage(settings: settings, loop: loop, server: server, cores: cores, clock: clock,
                                        logger: logger, snapshots: snapshots)
        storage.start()
        return storage
    }

    /// Stores `keyCheck`'s value if the database has none yet (the first daemon; concurrent first daemons agree
    /// on one winner through the row's key), then compares the stored value with it. A database without a value
    /// that holds sealed TOTP secrets already (from before the check) is adopted only by a key that opens one.
    private static func checkKey(_ keyCheck: KeyCheck, on connection: PGBlockingConnection, conninfo: String, now: PGValue,
                                 logger: Logger) throws(PostgreSQLOpenFailure) {
        let refusal = PostgreSQLOpenFailure.keyMismatch(keyFile: keyCheck.keyFile, conninfo: Conninfo.masked(conninfo))
        func read(_ sql: String) throws(PostgreSQLOpenFailure) -> PGRow? {
            do throws(PGFailure) {
                return try connection.execute(sql).rows.first
            } catch {
                throw .migration(step: "check the key file against the database", error)
            }
        }
        if try read("SELECT value FROM roster_key_check WHERE id = 1") == nil,
           let sealed = try read("SELECT COALESCE(sealed, pending) FROM totp LIMIT 1")?.bytes(0),
           !keyCheck.opensSealed(sealed) {
            throw refusal
        }
        do throws(PGFailure) {
            let inserted = try connection.execute("""
                INSERT INTO roster_key_check(id, value, created_at) VALUES (1, $1::text, \(PostgreSQLQueries.now(2)))
                ON CONFLICT (id) DO NOTHING RETURNING id
                """, [.text(keyCheck.value), now])
            if !inserted.rows.isEmpty {
                logger.notice("the PostgreSQL database now keeps the check value of the key file \(keyCheck.keyFile); "
                              + "every daemon sharing it must have the same key file")
            }
        } catch {
            throw .migration(step: "check the key file against the database", error)
        }
        guard try read("SELECT value FROM roster_key_check WHERE id = 1")?.text(0) == keyCheck.value else { throw refusal }
    }

    private func start() {
        pool.onPhaseChange = { [weak self] phase in self?.phaseChanged(to: phase) }
        listener.onNotification = { [weak self] channel, payload in self?.notified(channel: channel, payload: payload) }
        listener.onListening = { [weak self] in self?.listening() }
        listener.onDisconnected = { [weak self] in
            self?.logger.warning("the PostgreSQL listener lost its connection; changes made elsewhere meanwhile are re-read")
        }
        pool.start()
        listener.start()
    }

    /// The clock parameter of every statement that stamps or measures time.
    var now: PGValue { clock.map { .int($0.nowMs()) } ?? .null }

    /// The payload announcing `change` to the other daemons.
    func notification(_ change: StorageChange) -> String {
        ChangeNotification(origin: origin, change: change).payload ?? ""
    }

    // MARK: Running statements

    /// Sends `statements` through the pool and answers on the loop, failures in the boundary's terms (logged as
    /// `operation`). `force` where the protocol says a call is never refused by a budget.
    func query(_ statements: [PGStatement], transaction: Bool = false, charge: QueueCharge, force: Bool = false,
               _ operation: String, completion: @escaping (Result<[PGResult], StorageFailure>) -> Void) {
        guard !stopped else { return completion(.failure(StorageFailure.stopped)) }
        let logger = self.logger
        pool.execute(statements, transaction: transaction, charge: charge, force: force) { result in
            completion(result.mapError { $0.storageFailure(logging: logger, operation) })
        }
    }

    /// One statement's result.
    func query(_ statement: PGStatement, charge: QueueCharge, force: Bool = false, _ operation: String,
               completion: @escaping (Result<PGResult, StorageFailure>) -> Void) {
        query([statement], charge: charge, force: force, operation) { result in
            completion(result.flatMap { results in
                guard let first = results.first else { return .failure(.other) }
                return .success(first)
            })
        }
    }

    /// Runs `job` on the CPU workers and answers on the loop. Forced unless it is the call's first step: the
    /// statement that follows or preceded it was charged already.
    func compute<T: Sendable>(_ charge: QueueCharge, force: Bool = true,
                              _ job: @escaping @Sendable () -> Result<T, StorageFailure>,
                              completion: @escaping StorageCompletion<T>) {
        guard !stopped else { return completion(.failure(StorageFailure.stopped)) }
        cpu.run(on: loop, charge: charge, force: force, { (_: inout Void) in job() },
                refused: { .busy(retryAfterMs: $0) }, completion: completion)
    }

    // MARK: State and notifications

    private func phaseChanged(to phase: StorageState.Phase) {
        guard phase != state.phase else { return }
        state = StorageState(backend: "postgresql", phase: phase, sinceMs: wallClock.nowMs())
        // The server logs the change once, with what it means for requests (`storageStateChanged`).
        onStateChange?(state)
    }

    private func notified(channel: String, payload: String) {
        guard !stopped, channel == ChangeNotification.channel else { return }
        if AuditNotification.isAudit(payload) { return heardAudit(payload) }
        let notification: ChangeNotification
        do throws(ChangeNotification.ParseFailure) {
            notification = try ChangeNotification.parse(payload)
        } catch {
            // Another version's kind of change, or not Roster's: nothing this daemon holds depends on it.
            logger.warning("ignored a notification on \(channel) that this rosterd does not understand (\(error))")
            return
        }
        guard notification.origin != origin else { return }
        switch notification.change {
        case .accountCreated(let username, _): usernames.add(username)
        case .accountDeleted(_, let username, _): usernames.remove(username)
        case .tokenRevoked, .sessionsEnded, .contactsChanged, .resync, .emailChanged: break
        }
        onChange?(notification.change)
    }

    /// The listener is in place: whatever was sent while it was not is lost, so the directory is read again,
    /// then everything that depends on others' changes is told to re-check. The first time, only if the daemon
    /// was serving already (`warmUp` came first, as when the database was down at start): before that, the
    /// directory's first read and the forms still to open see everything.
    private func listening() {
        guard !stopped else { return }
        let first = !listenedBefore
        listenedBefore = true
        if first && !directoryWanted { return }
        if !first { logger.notice("the PostgreSQL listener is back; re-reading what may have changed meanwhile") }
        guard directoryWanted else { return onChange?(.resync) ?? () }
        fillDirectory { [weak self] in self?.onChange?(.resync) }
    }

    // MARK: The username directory

    /// Reads every username in pages (keyset, by key) into a new snapshot, replayed over by what was noted
    /// meanwhile; `then` runs when it is in, or failed.
    private func fillDirectory(then: (() -> Void)?) {
        fillGeneration += 1
        let generation = fillGeneration
        let started = loop.now
        usernames.beginRefill()
        snapshot = []
        // Room for every name first: a set that grows page by page rehashes all it holds each time it doubles,
        // hundreds of milliseconds on the loop at a million names.
        query(PostgreSQLQueries.userCount, charge: .daemon, force: true, "counting usernames") { [weak self] counted in
            guard let self, generation == self.fillGeneration else { return }
            if case .success(let result) = counted, let count = result.rows.first?.int(0) {
                self.snapshot.reserveCapacity(Int(clamping: count) + Self.directoryPage)
            }
            self.readDirectoryPage(after: "", generation: generation, started: started, then: then)
        }
    }

    private func readDirectoryPage(after: String, generation: Int, started: Instant, then: (() -> Void)?) {
        query(PostgreSQLQueries.usernameKeys(after: after, limit: Self.directoryPage), charge: .daemon, force: true,
              "reading usernames into memory") { [weak self] result in
            guard let self, generation == self.fillGeneration else { return }
            switch result {
            case .success(let page):
                var last: String?
                for row in page.rows {
                    guard let key = row.text(0) else { continue }
                    self.snapshot.insert(key)
                    last = key
                }
                if page.rows.count == Self.directoryPage, let last {
                    return self.readDirectoryPage(after: last, generation: generation, started: started, then: then)
                }
                let filled = self.snapshot
                self.snapshot = []
                let count = filled.count
                self.usernames.fill(with: consume filled)
                let elapsed = (self.loop.now - started).nanoseconds / 1_000_000
                self.logger.info("\(count) username(s) in memory, read in \(elapsed) ms")
            case .failure:
                self.snapshot = []
                self.usernames.fillFailed()
                self.logger.warning("cannot read usernames into memory now; the database answers checks until the next try")
            }
            then?()
        }
    }

    // MARK: StorageMaintenance

    /// Reads the username directory, once; checks are answered from the database meanwhile. If the database
    /// cannot be reached now, the listener's next connection tries again.
    public func warmUp() {
        guard !stopped, !directoryWanted else { return }
        directoryWanted = true
        fillDirectory(then: nil)
        refreshCounts()
    }

    public func apply(_ settings: ServerSettings) {
        cpu.budget = settings.storageBudget
        pool.apply(queueLimit: settings.maxQueuedJobs)
        contactTurns.limitPerUser = max(1, settings.maxQueuedJobsPerUser)
    }

    public func pruneExpired(failureWindowMs: Int64, tokenIdleMs: Int64) {
        query([PostgreSQLQueries.pruneFailures(windowMs: failureWindowMs, now: now),
               PostgreSQLQueries.purgeTokens(idleLimitMs: tokenIdleMs, now: now)],
              charge: .daemon, force: true, "pruning expired log-in failures and tokens") { _ in }
    }

    /// The shared database's snapshot as a standalone SQLite file at `path` (one that rosterd on SQLite serves),
    /// written by `snapshots` on a thread of its own over a connection of its own, off the loop and off the pool.
    /// The rows are read in one read-only repeatable-read transaction, so the copy is consistent while every
    /// daemon keeps writing. One at a time: each holds a connection and reads every row for seconds, so a second
    /// is told to come back (`busy`). `charge` is not spent: the one-at-a-time rule is this work's whole budget,
    /// and it takes nothing from the pool's queue.
    public func backup(to path: String, charge: QueueCharge,
                completion: @escaping (Result<BackupSummary, BackupFailure>) -> Void) {
        guard !stopped else { return completion(.failure(.storage(StorageFailure.stopped))) }
        guard let snapshots else {
            logger.error("admin.backup: this storage was opened without a snapshot writer")
            return completion(.failure(.storage(.other)))
        }
        if let refusal = backupTurn.take() { return completion(.failure(refusal)) }
        let (conninfo, logger, loop) = (self.conninfo, self.logger, self.loop)
        let finish = LoopBound(value: { [weak self] (result: Result<BackupSummary, BackupFailure>) in
            self?.backupTurn.release()
            completion(result)
        })
        let started = startDetachedThread {
            let result = snapshots.write(from: { () throws(CopyError) -> any SnapshotSource in
                try PostgreSQLCopy(conninfo: conninfo, statementTimeoutMs: Self.backupStatementTimeoutMs)
            }, to: path, logger: logger)
            loop.execute { finish.value(result) }
        }
        if !started {
            backupTurn.release()
            completion(.failure(.storage(.busy(retryAfterMs: BackupTurn.retryAfterMs))))
        }
    }

    /// Built from memory, and never held by the database (a frozen server would hold a query until its
    /// deadline): accounts from the username directory (else the last count), contacts from the last count, the
    /// pool's figures and the state. While the storage is up, a fresh count is waited for `statisticsWait` at
    /// most (one in flight at a time, shared by every call meanwhile); while it is not, the answer is at once.
    public func statistics(completion: @escaping StorageCompletion<StorageStatistics>) {
        guard !stopped else { return completion(.failure(StorageFailure.stopped)) }
        // Read before the count is queued, so that it does not count itself as work in flight.
        let queues = ["storage": pool.stats]
        var answered = false
        var timer: Scheduled?
        let answer = { [weak self] in
            guard !answered else { return }
            answered = true
            timer?.cancel()
            guard let self else { return completion(.failure(StorageFailure.stopped)) }
            completion(.success(StorageStatistics(accounts: self.usernames.count ?? self.lastCounts.accounts,
                                                  contacts: self.lastCounts.contacts,
                                                  usernameDirectory: self.usernames.phase.rawValue,
                                                  queues: queues, state: self.state,
                                                  mail: self.lastCounts.mail)))
        }
        guard state.phase == .up else { return answer() }
        timer = loop.schedule(at: loop.now + Self.statisticsWait) { answer() }
        refreshCounts(then: answer)
    }

    /// A COUNT of accounts, contacts and the outbox by status into `lastCounts`; `then` runs when it answered (or failed).
    private func refreshCounts(then: (() -> Void)? = nil) {
        if countWaiters != nil {
            if let then { countWaiters?.append(then) }
            return
        }
        guard state.phase == .up else { return then?() ?? () }
        countWaiters = then.map { [$0] } ?? []
        query(PostgreSQLQueries.counts, charge: .daemon, force: true, "counting accounts and contacts") { [weak self] result in
            guard let self else { return }
            if case .success(let counts) = result, let row = counts.rows.first {
                self.lastCounts = (accounts: Int(row.int(0) ?? 0), contacts: Int(row.int(1) ?? 0),
                                   mail: MailCounts(queued: Int(row.int(2) ?? 0), failed: Int(row.int(3) ?? 0),
                                                    sent: Int(row.int(4) ?? 0)))
            }
            let waiters = self.countWaiters ?? []
            self.countWaiters = nil
            for waiter in waiters { waiter() }
        }
    }

    /// The pool, the listener and the workers stop; every call from now on answers `StorageFailure.stopped`.
    /// The server keeps its own consistency: nothing to record for the next start.
    public func finish() { stop() }

    public func stop() {
        guard !stopped else { return }
        stopped = true
        pool.stop()
        listener.stop()
        cpu.stop()
    }
}

/// Why `PostgreSQLStorage.open` refused to serve a database. Never shows a password.
public enum PostgreSQLOpenFailure: Error, CustomStringConvertible {
    /// The server could not be reached or refused the connection (conninfo masked).
    case cannotConnect(conninfo: String, PGFailure)
    /// The database holds tables that are not Roster's, and no `roster_migrations`: never adopted.
    case notOurs(tables: [String])
    /// `roster_migrations` names a migration this rosterd does not know (a newer rosterd's database).
    case unknownMigrations(applied: [String])
    /// A step of checking or migrating failed.
    case migration(step: String, PGFailure)
    /// The database was first served with another key file than `keyFile`: its TOTP secrets and recovery codes
    /// would not open with this one.
    case keyMismatch(keyFile: String, conninfo: String)

    init(_ failure: PostgreSQLMigrator.Failure) {
        switch failure {
        case .notOurs(let tables): self = .notOurs(tables: tables)
        case .unknownHistory(let applied): self = .unknownMigrations(applied: applied)
        case .failed(let step, let error): self = .migration(step: step, error)
        }
    }

    public var description: String {
        switch self {
        case .cannotConnect(let conninfo, let failure):
            "cannot connect to PostgreSQL (\(conninfo)): \(Self.words(failure))"
        case .notOurs(let tables):
            "the PostgreSQL database is not Roster's: it has tables (\(tables.prefix(5).joined(separator: ", "))"
                + "\(tables.count > 5 ? ", …" : "")) and no roster_migrations; give rosterd a database of its own"
        case .unknownMigrations(let applied):
            "the PostgreSQL database was migrated by another rosterd version (roster_migrations: "
                + "\(applied.joined(separator: ", "))), which this one does not know; refused"
        case .migration(let step, let failure):
            "cannot \(step) in PostgreSQL: \(Self.words(failure))"
        case .keyMismatch(let keyFile, let conninfo):
            "the key file \(keyFile) is not the one the PostgreSQL database (\(conninfo)) was first served with; its "
                + "TOTP secrets and recovery codes need that key: give this rosterd the same key file as the other "
                + "daemons of the database (refused) [key_mismatch]"
        }
    }

    static func words(_ failure: PGFailure) -> String {
        switch failure {
        case .unavailable: "the server cannot be reached"
        case .busy: "the server is busy"
        case .timeout: "no answer in time"
        case .server(let sqlState, let message): "\(message) (SQLSTATE \(sqlState))"
        }
    }
}
