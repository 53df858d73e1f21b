import Dispatch
import Glibc
import RosterCore
import RosterPostgres
import RosterPostgresTesting
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Testing

/// What `admin.backup` and a reload do on the PostgreSQL backend, below the daemon: one backup at a time, off the
/// loop, reading the real database's snapshot; a new `MaxQueuedJobs=` reaching the pool. The snapshot's file and
/// the daemon's round trip are `SQLiteCopyTests` and rosterdTests' `PostgresBackupTests`.
@Suite("PostgreSQL backup and reload")
struct PostgreSQLBackupTests {
    /// A writer that opens the real source and reads its snapshot, then holds the backup until `release()`; it
    /// notes the thread it ran on and the counts it read.
    final class GatedWriter: SnapshotWriter, @unchecked Sendable {
        private let gate = DispatchSemaphore(value: 0)
        private let lock = Locked<(threads: [pthread_t], counts: [CopyCounts])>(([], []))

        var threads: [pthread_t] { lock.withLock { $0.threads } }
        var counts: [CopyCounts] { lock.withLock { $0.counts } }

        func release() { gate.signal() }

        func write(from openSource: () throws(CopyError) -> any SnapshotSource, to path: String,
                   logger: Logger) -> Result<BackupSummary, BackupFailure> {
            lock.withLock { $0.threads.append(pthread_self()) }
            do throws(CopyError) {
                var counted = CopyCounts()
                try openSource().readSnapshot(batchSize: 10, counted: { counted = $0 }) { _ in }
                lock.withLock { $0.counts.append(counted) }
            } catch {
                return .failure(.storage(.other))
            }
            gate.wait()
            return .success(BackupSummary(path: path, pages: 1, bytes: 1))
        }
    }

    private func storage(_ harness: LoopHarness, server: ServerSettings = ServerSettings(),
                         snapshots: (any SnapshotWriter)?) throws -> PostgreSQLStorage {
        let conninfo = try PostgresTestCluster.shared.createDatabase()
        let storage = try PostgreSQLStorage.open(settings: PostgreSQLSettings(conninfo: conninfo, connections: 2),
                                                 loop: harness.loop, server: server, cores: 2, clock: ManualWallClock(),
                                                 logger: Logger(level: .err), snapshots: snapshots)
        try harness.run(until: { storage.state.phase == .up })
        return storage
    }

    @Test func oneBackupAtATimeOffTheLoopReadingTheDatabase() throws {
        let harness = try LoopHarness()
        let writer = GatedWriter()
        let storage = try storage(harness, snapshots: writer)
        defer { storage.stop() }
        _ = try harness.answer { storage.acting(for: .daemon).createAccount(NewAccount(username: "kept01", display: "kept01", email: nil,
                                                                                       passwordHash: StoragePair.placeholderHash),
                                                                            completion: $0) }.get()
        var first: Result<BackupSummary, BackupFailure>?
        storage.acting(for: .daemon).backup(to: "/tmp/first.db") { first = $0 }
        var second: Result<BackupSummary, BackupFailure>?
        storage.acting(for: .daemon).backup(to: "/tmp/second.db") { second = $0 }
        #expect(second == .failure(.storage(.busy(retryAfterMs: 1_000))), "a second backup did not answer busy at once")
        // The loop keeps answering while the backup is held on its own thread.
        try harness.run(until: { writer.counts.count == 1 })
        #expect(try harness.answer { storage.statistics(completion: $0) }.get().accounts == 1)
        #expect(first == nil)
        #expect(writer.threads.allSatisfy { pthread_equal($0, pthread_self()) == 0 }, "the backup ran on the loop's thread")
        #expect(writer.counts.first?.accounts == 1)
        writer.release()
        try harness.run(until: { first != nil })
        #expect(first == .success(BackupSummary(path: "/tmp/first.db", pages: 1, bytes: 1)))
        // Done: the next one runs.
        writer.release()
        let third = try harness.answer { storage.acting(for: .daemon).backup(to: "/tmp/third.db", completion: $0) }
        #expect(third == .success(BackupSummary(path: "/tmp/third.db", pages: 1, bytes: 1)))
    }

    /// Before, the pool kept the limit it was opened with whatever a SIGHUP said (the CPU workers followed).
    @Test func aReloadAppliesTheNewQueueLimitToThePool() throws {
        let harness = try LoopHarness()
        let storage = try storage(harness, server: ServerSettings(maxQueuedJobs: 100), snapshots: nil)
        defer { storage.stop() }
        #expect(try harness.answer { storage.statistics(completion: $0) }.get().queues["storage"]?.limit == 100)
        storage.apply(ServerSettings(maxQueuedJobs: 7))
        #expect(try harness.answer { storage.statistics(completion: $0) }.get().queues["storage"]?.limit == 7)
    }
}
