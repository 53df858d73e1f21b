import Foundation
import Glibc
import RosterCore
import RosterPostgres
import RosterPostgresTesting
import RosterRuntime
import RosterStorage
@testable import RosterSQLite
import RosterStorageTesting
import Testing

/// The backends the contract suite runs against; every contract test takes each of them in turn.
enum BackendKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case memory
    case sqlite
    case postgres

    var testDescription: String { rawValue }

    /// A fresh, empty backend on a manual wall clock. `rowLimit` makes it nearly full: writes past about that
    /// many small rows (pages, for SQLite; 4 KiB of row text each, for PostgreSQL) answer `.full`.
    func make(rowLimit: Int? = nil) throws -> Backend {
        let clock = ManualWallClock()
        switch self {
        case .memory:
            let storage = InMemoryStorage(clock: clock)
            storage.rowLimit = rowLimit
            return try Backend(storage: storage, clock: clock, reopen: { storage })
        case .sqlite:
            let directory = try TemporaryDirectory()
            let path = directory.path("roster.db")
            let loop = try EventLoop(signals: [])
            let logger = Logger(level: .info, sink: directory.log)
            // Two workers, as the daemon has at least, so that writes really race for the write turn.
            let settings = ServerSettings(storageWorkers: 2)
            let storage = try SQLiteStorage.open(path: path, loop: loop, settings: settings, cores: 2, clock: clock,
                                                 logger: logger, sparePages: rowLimit)
            return try Backend(storage: storage, clock: clock, loop: loop, keeping: directory) {
                // As after a crash: the first instance neither stopped nor closed, only its lock let go.
                storage.releaseLock()
                return try SQLiteStorage.open(path: path, loop: loop, settings: settings, cores: 2, clock: clock,
                                              logger: logger)
            }
        case .postgres:
            // A database of its own on the shared throwaway cluster; the log is kept in memory, as SQLite's.
            let cluster = try PostgresTestCluster.shared
            let conninfo = try cluster.createDatabase()
            let kept = try TemporaryDirectory()
            let loop = try EventLoop(signals: [])
            let logger = Logger(level: .info, sink: kept.log)
            let settings = ServerSettings(storageWorkers: 2)
            // Two connections, so that writes really race on the server.
            let open = {
                try PostgreSQLStorage.open(settings: PostgreSQLSettings(conninfo: conninfo, connections: 2), loop: loop,
                                           server: settings, cores: 2, clock: clock, logger: logger)
            }
            let storage = try open()
            if let rowLimit { try PostgresQuota.install(bytes: rowLimit * 4_096, conninfo: conninfo, on: cluster) }
            // A second instance on the same database, as a second daemon or one restarted after a crash.
            return try Backend(storage: storage, clock: clock, loop: loop, keeping: kept, reopen: open)
        }
    }
}

/// One backend under test, with the loop its answers come back on. The test's own thread runs the loop, so a
/// completion that runs anywhere else is caught.
final class Backend {
    let storage: any Storage
    let clock: ManualWallClock
    let loop: EventLoop
    private let loopThread = pthread_self()
    private let reopenStorage: () throws -> any Storage
    /// What the backend's files live in, removed with it.
    private let kept: AnyObject?
    /// Every `onAudit` call of `storage`, in order.
    let heard = HeardAudits()

    init(storage: any Storage, clock: ManualWallClock, loop: EventLoop? = nil, keeping kept: AnyObject? = nil,
         reopen: @escaping () throws -> any Storage) throws {
        self.storage = storage
        self.clock = clock
        self.loop = try loop ?? EventLoop(signals: [])
        self.kept = kept
        self.reopenStorage = reopen
        let heard = self.heard
        let loopThread = self.loopThread
        // Not through `completion(_:)`: the storage must not hold this backend, whose deinit stops it.
        storage.onAudit = { entry, origin in
            #expect(pthread_equal(pthread_self(), loopThread) != 0, "onAudit ran off the loop thread")
            heard.entries.append(HeardAudit(entry: entry, origin: origin))
        }
    }

    /// The same data as a new instance opened on it finds it, with this one left as it is (no clean close).
    func reopened() throws -> any Storage {
        let storage = try reopenStorage()
        others.append(storage)
        return storage
    }

    /// Instances opened by `reopened`, stopped with this one.
    private var others: [any Storage] = []

    /// A backend holding connections to a shared server lets them go with the test.
    deinit {
        storage.stop()
        for other in others { other.stop() }
    }

    /// Turns the loop until `done`, failing the test instead of hanging when the answer never comes.
    func run(until done: () -> Bool, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let deadline = loop.now + .seconds(20)
        while !done() {
            guard loop.now < deadline else {
                Issue.record("no answer within 20 s", sourceLocation: sourceLocation)
                return
            }
            try loop.runOnce(timeoutMs: 20)
        }
    }

    /// The one answer to `call`, which must come on the loop thread, once.
    func answer<T>(sourceLocation: SourceLocation = #_sourceLocation,
                   _ call: (@escaping StorageCompletion<T>) -> Void) throws -> Result<T, StorageFailure> {
        var answers: [Result<T, StorageFailure>] = []
        call(completion { answers.append($0) })
        try run(until: { !answers.isEmpty }, sourceLocation: sourceLocation)
        // A second answer would come in the same turn or soon after: give it one short turn to show up.
        try loop.runOnce(timeoutMs: 0)
        #expect(answers.count == 1, "answered \(answers.count) times", sourceLocation: sourceLocation)
        return try #require(answers.first, sourceLocation: sourceLocation)
    }

    /// Waits until the backend's queues are empty: pruning answers nothing, so a test sees it done this way.
    func settle(sourceLocation: SourceLocation = #_sourceLocation) throws {
        var idle = false
        try run(until: {
            if !idle {
                storage.statistics(completion: completion { result in
                    idle = (try? result.get().queues.values.allSatisfy { $0.waiting == 0 && $0.running == 0 }) ?? false
                })
            }
            return idle
        }, sourceLocation: sourceLocation)
    }

    /// The value of a call that must succeed.
    func value<T>(sourceLocation: SourceLocation = #_sourceLocation,
                  _ call: (@escaping StorageCompletion<T>) -> Void) throws -> T {
        try answer(sourceLocation: sourceLocation, call).get()
    }

    /// `body` wrapped to check that it runs on the loop thread.
    func completion<T>(_ body: @escaping (T) -> Void) -> (T) -> Void {
        let loopThread = self.loopThread
        return { result in
            #expect(pthread_equal(pthread_self(), loopThread) != 0, "a completion ran off the loop thread")
            body(result)
        }
    }
}

/// One call of a backend's `onAudit`.
struct HeardAudit: Equatable {
    let entry: AuditEntry
    let origin: AuditOrigin
}

/// What a backend's `onAudit` was called with, oldest first.
final class HeardAudits {
    var entries: [HeardAudit] = []
}

/// A charge for a user's work, as the server would make it.
func charge(_ user: AccountID, connection: UInt64 = 1, bytes: Int = 0) -> QueueCharge {
    QueueCharge(payer: .account(user), connection: connection, bytes: bytes)
}

/// A charge before a log-in.
let peerCharge = QueueCharge(payer: .peer(1_000), connection: 1)

/// A valid-looking Argon2id string for accounts whose password is never verified.
let placeholderHash = "$argon2id$v=19$m=8192,t=1,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA"

extension Backend {
    /// A new account named `username`, which must not exist yet.
    func account(_ username: String, email: String? = nil) throws -> Account {
        try value { storage.acting(for: peerCharge).createAccount(NewAccount(username: username, display: username, email: email,
                                                                             passwordHash: placeholderHash), completion: $0) }
    }
}
