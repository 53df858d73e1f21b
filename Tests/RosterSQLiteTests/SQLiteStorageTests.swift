import Foundation
import Glibc
import RosterCore
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Testing
@testable import RosterSQLite

/// What the SQLite backend does beyond the storage contract (which `RosterStorageContractTests` checks): what it
/// does at open, its username directory, its budgets, and its one backup at a time.
@Suite("SQLiteStorage")
struct SQLiteStorageTests {
    /// A backend on a fresh file, with its loop on this thread and its log kept.
    final class Harness {
        let directory: TemporaryDirectory
        let loop: EventLoop
        let clock = ManualWallClock()
        let log = KeptLog()
        var settings = ServerSettings(storageWorkers: 2)

        init() throws {
            directory = try TemporaryDirectory()
            loop = try EventLoop(signals: [])
        }

        var path: String { directory.path("roster.db") }

        func open() throws(SQLiteStorageOpenFailure) -> SQLiteStorage {
            try SQLiteStorage.open(path: path, loop: loop, settings: settings, cores: 2, clock: clock,
                                   logger: Logger(level: .debug, sink: log))
        }

        /// Turns the loop until `done`, for at most 20 s.
        func run(until done: () -> Bool) throws {
            let deadline = loop.now + .seconds(20)
            while !done() && loop.now < deadline { try loop.runOnce(timeoutMs: 20) }
            #expect(done(), "no answer within 20 s")
        }

        func answer<T>(_ call: (@escaping (T) -> Void) -> Void) throws -> T {
            var answer: T?
            call { answer = $0 }
            try run(until: { answer != nil })
            return try #require(answer)
        }
    }

    static let hash = "$argon2id$v=19$m=8192,t=1,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA"
    private let peer = QueueCharge(payer: .peer(1_000), connection: 7)

    private func register(_ name: String, _ storage: SQLiteStorage, _ harness: Harness) throws -> Account {
        try harness.answer {
            storage.acting(for: peer).createAccount(NewAccount(username: name, display: name, email: nil, passwordHash: Self.hash),
                                                    completion: $0)
        }.get()
    }

    @Test func aSecondOpenOfTheSameFileIsRefusedNamingTheHolder() throws {
        let harness = try Harness()
        let first = try harness.open()
        do {
            _ = try harness.open()
            Issue.record("a second instance opened the database")
        } catch {
            #expect(error.description == DatabaseLock.Failure.heldBy(pid: getpid(), lockPath: DatabaseFiles(path: harness.path).lockPath).description)
        }
        first.releaseLock()
        _ = try harness.open()
    }

    @Test func anotherApplicationsFileIsRefusedBeforeALockFileIsMade() throws {
        let harness = try Harness()
        let foreign = try Database(path: harness.path)
        try foreign.execute("CREATE TABLE notes(body TEXT); INSERT INTO notes VALUES ('keep')")
        foreign.close()
        do {
            _ = try harness.open()
            Issue.record("a foreign database was opened")
        } catch .store(.refused(let refusal)) {
            #expect(refusal.reason == .unrecognisedSchema)
        } catch {
            Issue.record("\(error)")
        }
        #expect(!FileManager.default.fileExists(atPath: harness.path + ".lock"))
    }

    @Test func openingRemovesTheBackupPartialsOfDeadProcessesAndSaysSo() throws {
        let harness = try Harness()
        let stale = ".roster-backup.\(Int32.max - 1).0123456789abcdef.partial"
        #expect(FileManager.default.createFile(atPath: harness.directory.path(stale), contents: Data("half a copy".utf8)))
        _ = try harness.open()
        #expect(!FileManager.default.fileExists(atPath: harness.directory.path(stale)))
        #expect(harness.log.messages.contains("removed \(stale), a backup's partial file left by a process that died"))
    }

    @Test func usernameChecksAreAnsweredFromMemoryOnceWarm() throws {
        let harness = try Harness()
        let storage = try harness.open()
        _ = try register("alice1", storage, harness)
        func statistics() throws -> StorageStatistics { try harness.answer { storage.statistics(completion: $0) }.get() }
        #expect(try statistics().usernameDirectory == "loading")
        #expect(try statistics().accounts == 1)
        storage.warmUp()
        try harness.run(until: { (try? statistics().usernameDirectory) == "ready" })
        #expect(harness.log.messages.contains { $0.hasPrefix("1 username(s) in memory, read in ") })
        // A row written behind the daemon's back is not seen: the answer comes from the directory.
        let other = try Database(path: harness.path)
        try other.execute("INSERT INTO users(canonical, display, password_hash, created_at) VALUES ('bobby1', 'b', '\(Self.hash)', 0)")
        let taken = { (name: String) throws -> Bool in
            try harness.answer { storage.acting(for: self.peer).isUsernameTaken(name, completion: $0) }.get()
        }
        #expect(try !taken("bobby1"))
        #expect(try taken("ALICE1"))
        // A registration answered after warming is in the directory at once.
        _ = try register("carol1", storage, harness)
        #expect(try taken("carol1"))
        #expect(try statistics().accounts == 2)
        let queue = try #require(try statistics().queues["storage"])
        #expect(queue.workers == 2)
    }

    @Test func aBudgetRefusesAsBusyWhatMayBeRefusedAndNothingElse() throws {
        let harness = try Harness()
        harness.settings = ServerSettings(storageWorkers: 1, maxQueuedJobsPerConnection: 1)
        let storage = try harness.open()
        let user = try register("dave01", storage, harness)
        let hold = Locked(false)
        let connection = QueueCharge(payer: .account(user.id), connection: 9)
        // One job that waits until told, so that the connection's budget of one is spent.
        storage.acting(for: connection).loadSearchIndex(of: user.id, build: { _ in hold.wait { $0 ? () : nil } },
                                                        completion: { _ in })
        var answers: [String] = []
        // A small page is read on the loop's connection: no queue, so no budget to refuse it.
        storage.acting(for: connection).readContacts(Array(1...100), of: user.id, cancelled: Locked(false),
                                                     encode: { $0.count }) { result in
            answers.append("small page \((try? result.get()).map(String.init) ?? "failed")")
        }
        storage.acting(for: connection).readContacts(Array(1...101), of: user.id, cancelled: Locked(false),
                                                     encode: { $0.count }) { result in
            if case .failure(.busy) = result { answers.append("big page busy") }
        }
        storage.acting(for: connection).resumeToken(hash: [UInt8](repeating: 1, count: 32),
                                                    idleLimitMs: 1_000) { result in
            if case .failure(.busy(let wait)) = result, wait > 0 { answers.append("resume busy") }
        }
        storage.acting(for: connection).addContact(ContactDraft(name: "A"), for: user.id) { result in
            if case .failure(.busy) = result { answers.append("add busy") }
        }
        // Never refused: what follows work already paid for.
        storage.acting(for: connection).storeToken(hash: [UInt8](repeating: 2, count: 32), for: user.id) { result in
            answers.append("token \((try? result.get()) != nil)")
        }
        storage.acting(for: connection).recordFailure(keys: ["account:dave01"]) { result in
            answers.append("failure \((try? result.get()) != nil)")
        }
        storage.acting(for: connection).revokeToken(hash: [UInt8](repeating: 2, count: 32)) { result in
            answers.append("revoke \((try? result.get()) ?? false)")
        }
        #expect(answers == ["small page 0", "big page busy", "resume busy", "add busy"])
        hold.withLock { $0 = true }
        hold.broadcast()
        try harness.run(until: { answers.count == 7 })
        #expect(answers == ["small page 0", "big page busy", "resume busy", "add busy", "token true", "failure true",
                            "revoke true"])
    }

    /// The caller binds only who pays; the backend charges an import its data's size, which the payer's byte
    /// budget counts while it waits: a second import of the same user waiting is refused, another user's is not.
    @Test func anImportHoldsItsDataSizeAgainstItsPayersByteBudget() throws {
        let harness = try Harness()
        harness.settings = ServerSettings(storageWorkers: 1, maxQueuedImportBytesPerUser: 64)
        let storage = try harness.open()
        let ann = try register("ann001", storage, harness)
        let bob = try register("bob001", storage, harness)
        let hold = Locked(false)
        // The one worker waits until told, so the imports below wait in the queue.
        storage.acting(for: peer).loadSearchIndex(of: bob.id, build: { _ in hold.wait { $0 ? () : nil } },
                                                  completion: { _ in })
        let data = "name\n" + String(repeating: "x", count: 35) + "\n"
        #expect(data.utf8.count == 41)
        var answers: [String] = []
        func importFor(_ account: Account, _ label: String) {
            storage.acting(for: QueueCharge(payer: .account(account.id), connection: UInt64(account.id)))
                .importContacts(data, format: .csv, for: account.id) { result in
                    switch result {
                    case .success(let outcome): answers.append("\(label) added \(outcome.added.count)")
                    case .failure(.busy): answers.append("\(label) busy")
                    case .failure(let failure): answers.append("\(label) \(failure)")
                    }
                }
        }
        importFor(ann, "ann first")
        importFor(ann, "ann second")
        importFor(bob, "bob")
        #expect(answers == ["ann second busy"])
        hold.withLock { $0 = true }
        hold.broadcast()
        try harness.run(until: { answers.count == 3 })
        #expect(answers == ["ann second busy", "ann first added 1", "bob added 1"])
    }

    /// Issue 12: a `contacts.add` took 233 ms instead of 12 with two CPU hogs on the host while the storage workers
    /// stood back. They keep the daemon's own policy and nice, idle or busy.
    @Test func theWorkersKeepTheDaemonsOwnPriority() throws {
        let harness = try Harness()
        let storage = try harness.open()
        let user = try register("gina01", storage, harness)
        let release = Locked(false)
        let started = Locked(false)
        storage.acting(for: peer).loadSearchIndex(of: user.id, build: { _ in
                              started.withLock { $0 = true }
                              started.broadcast()
                              release.wait { $0 ? () : nil }
                          }, completion: { _ in })
        defer {
            release.withLock { $0 = true }
            release.broadcast()
        }
        started.wait { $0 ? () : nil }
        // A thread notes its id as it starts.
        var threads = storage.workers.workerThreads
        for _ in 0..<500 where threads.contains(0) {
            usleep(10_000)
            threads = storage.workers.workerThreads
        }
        #expect(threads.count == 2 && !threads.contains(0))
        errno = 0
        let ownNice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        for thread in threads {
            #expect(sched_getscheduler(thread) == 0, "a storage worker is not SCHED_OTHER")
            #expect(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(thread)) == ownNice)
        }
    }

    @Test func oneBackupAtATimeAndARefusedTargetIsLogged() throws {
        let harness = try Harness()
        let storage = try harness.open()
        _ = try register("erin01", storage, harness)
        var answers: [Result<BackupSummary, BackupFailure>] = []
        let target = harness.directory.path("copy.db")
        storage.acting(for: peer).backup(to: target) { answers.append($0) }
        storage.acting(for: peer).backup(to: harness.directory.path("other.db")) { answers.append($0) }
        #expect(answers == [.failure(.storage(.busy(retryAfterMs: 1_000)))])
        try harness.run(until: { answers.count == 2 })
        guard case .success(let summary) = answers[1] else { Issue.record("\(answers)"); return }
        #expect(summary.path == target)
        #expect(summary.pages > 0)
        let copy = try Database(path: target)
        #expect(try UserStore(database: copy).usernameExists("erin01"))
        let again = try harness.answer { storage.acting(for: peer).backup(to: target, completion: $0) }
        #expect(again == .failure(.refused(.targetExists)))
        #expect(harness.log.messages.contains("backup to \(target) refused: target_exists"))
    }

    @Test func storedTimesComeFromTheInjectedClock() throws {
        let harness = try Harness()
        let storage = try harness.open()
        harness.clock.advance(byMs: 12_345)
        let account = try register("fred01", storage, harness)
        #expect(account.createdAtMs == harness.clock.nowMs())
        let stored = try UserStore(database: try Database(path: harness.path)).user(canonical: "fred01")
        #expect(stored?.createdAt == harness.clock.nowMs())
        let contact = try harness.answer {
            storage.acting(for: peer).addContact(ContactDraft(name: "G"), for: account.id, completion: $0)
        }.get()
        #expect(contact.contact.createdAt == harness.clock.nowMs())
    }
}
