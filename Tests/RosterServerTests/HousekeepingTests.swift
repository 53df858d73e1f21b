import RosterCore
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Testing
@testable import RosterServer

/// The service manager as housekeeping sees it: the pings and status lines it was sent.
private final class RecordingNotifier: HousekeepingNotifier {
    let watchdogInterval: Duration?
    private(set) var pings = 0
    private(set) var lines: [String] = []

    init(watchdogInterval: Duration? = nil) { self.watchdogInterval = watchdogInterval }

    func watchdogPing() { pings += 1 }
    func status(_ text: String) { lines.append(text) }
}

/// What the status line counts, as the test sets it.
private final class SetStatus: HousekeepingStatus {
    var connectionCount = 0
    var loggedInCount = 0
    var storageStatus: String?
}

/// Housekeeping on its own, on a manual clock: each chore at its interval and none after `stop`, the status line's
/// text, and the audit log pruned by the retention in force at each turn.
@Suite("Housekeeping")
struct HousekeepingTests {
    private let scheduler = ManualScheduler()
    private let clock = ManualWallClock()
    private let storage: InMemoryStorage
    private let status = SetStatus()
    private let log = KeptLog()
    private let sweeps = Locked(0)
    private let housekeeping: Housekeeping

    init() {
        storage = InMemoryStorage(clock: clock)
        let sweeps = self.sweeps
        housekeeping = Housekeeping(scheduler: scheduler, storage: storage, status: status, wallClock: clock,
                                    config: DaemonConfig(), logger: Logger(level: .debug, sink: log),
                                    sweepFailedEntries: { sweeps.withLock { $0 += 1 } })
    }

    private var statisticsAsked: Int { storage.calls.filter { $0 == .statistics }.count }
    private var auditPrunings: Int { storage.calls.filter { $0 == .pruneAudit }.count }
    private var sweepCount: Int { sweeps.withLock { $0 } }

    private func append(_ event: AuditEvent) {
        let record = AuditRecord(event: event, username: "alice1", peer: AuditPeer(uid: 1000, pid: 1, client: nil))
        storage.acting(for: .daemon).appendAudit(record) { _ in }
    }

    @Test func eachChoreRepeatsAtItsIntervalAndNoneAfterStop() {
        let notifier = RecordingNotifier(watchdogInterval: .seconds(20))
        housekeeping.start(notifier: notifier)
        // At start: the status line and the audit log's pruning, nothing else.
        #expect(notifier.lines.count == 1 && statisticsAsked == 1 && auditPrunings == 1)
        #expect(notifier.pings == 0 && sweepCount == 0 && storage.expiredPrunings.isEmpty)

        scheduler.advance(by: .seconds(5) - .milliseconds(1))
        #expect(notifier.lines.count == 1)
        scheduler.advance(by: .milliseconds(1))
        #expect(notifier.lines.count == 2)

        // Half the watchdog interval, and the failed-entry sweep's 10 s.
        scheduler.advance(to: .zero + .seconds(10) - .milliseconds(1))
        #expect(notifier.pings == 0 && sweepCount == 0)
        scheduler.advance(by: .milliseconds(1))
        #expect(notifier.pings == 1 && sweepCount == 1)

        scheduler.advance(to: .zero + .seconds(600) - .milliseconds(1))
        #expect(storage.expiredPrunings.isEmpty)
        scheduler.advance(by: .milliseconds(1))
        let policy = DaemonConfig().policy
        #expect(storage.expiredPrunings.map { [$0.failureWindowMs, $0.tokenIdleMs] }
                == [[policy.rateLimitInterval.nanoseconds / 1_000_000, policy.sessionIdle.nanoseconds / 1_000_000]])
        #expect(notifier.pings == 60 && sweepCount == 60 && notifier.lines.count == 121)

        scheduler.advance(to: .zero + .seconds(3_600) - .milliseconds(1))
        #expect(auditPrunings == 1)
        scheduler.advance(by: .milliseconds(1))
        #expect(auditPrunings == 2 && storage.expiredPrunings.count == 6)

        housekeeping.stop()
        #expect(scheduler.pendingCount == 0, "every repeat is cancelled")
        let asked = storage.calls.count, lines = notifier.lines.count, pings = notifier.pings
        scheduler.advance(by: .seconds(7_200))
        #expect(storage.calls.count == asked && notifier.lines.count == lines && notifier.pings == pings)
        #expect(sweepCount == 360 && storage.expiredPrunings.count == 6)
    }

    @Test func aSecondStartRunsEachChoreNoMoreOften() {
        let notifier = RecordingNotifier(watchdogInterval: .seconds(20))
        housekeeping.start(notifier: notifier)
        housekeeping.start(notifier: notifier)
        #expect(scheduler.pendingCount == 5)
        scheduler.advance(by: .seconds(10))
        #expect(notifier.pings == 1 && sweepCount == 1)
    }

    @Test func noWatchdogIntervalMeansNoPings() {
        let notifier = RecordingNotifier()
        housekeeping.start(notifier: notifier)
        scheduler.advance(by: .seconds(60))
        #expect(notifier.pings == 0 && notifier.lines.count == 13)
    }

    @Test func theStatusLineCountsConnectionsSessionsAndUsersAndSaysWhatTheStorageIs() throws {
        status.connectionCount = 3
        status.loggedInCount = 2
        housekeeping.postStatus()
        #expect(statisticsAsked == 0, "nothing is posted before start")

        let notifier = RecordingNotifier()
        var made: Account?
        let alice = NewAccount(username: "alice1", display: "alice1", email: nil,
                               passwordHash: FakePasswordWork.hash(of: "secret1"))
        storage.acting(for: .daemon).createAccount(alice) { made = try? $0.get() }
        #expect(made != nil)
        housekeeping.start(notifier: notifier)
        #expect(notifier.lines == ["Serving 3 connection(s), 2 logged in; 1 user(s)"])

        // The storage cannot count its users, and its own state says why.
        storage.failures[.statistics] = .unavailable(retryAfterMs: 1_000)
        status.storageStatus = "storage memory down since 2026-12-01T08:41:00Z"
        scheduler.advance(by: .seconds(5))
        #expect(notifier.lines.last
                == "Serving 3 connection(s), 2 logged in; users not counted; storage memory down since 2026-12-01T08:41:00Z")

        // Counted again while the storage still reconnects.
        storage.failures = [:]
        status.storageStatus = "storage memory connecting"
        status.loggedInCount = 0
        housekeeping.postStatus()
        #expect(notifier.lines.last == "Serving 3 connection(s), 0 logged in; 1 user(s); storage memory connecting")
        #expect(housekeeping.statusLine(accounts: nil) == "Serving 3 connection(s), 0 logged in; users not counted; "
                + "storage memory connecting")
    }

    @Test func auditPruningJudgesByTheRetentionInForceAtEachTurn() {
        let day: Int64 = 86_400_000
        append(.register)                        // 1: 31 days old at the start
        clock.advance(byMs: 2 * day)
        append(.login)                           // 2: 29 days old at the start
        clock.advance(byMs: 29 * day)
        housekeeping.config.audit.retentionDays = 30
        housekeeping.startAuditPruning()
        #expect(storage.auditLog.map(\.id) == [2])
        #expect(log.messages.last == "audit log pruned: 1 entry older than 30 day(s)")
        #expect(log.kept.last?.fields["ROSTER_PRUNED"] == "1")

        // A reload's retention is what the next turn prunes by; nothing left to prune is said too (at debug).
        housekeeping.config.audit.retentionDays = 90
        scheduler.advance(by: Housekeeping.auditPruneInterval)
        #expect(storage.auditLog.map(\.id) == [2])
        #expect(log.messages.last == "audit log pruned: 0 entries older than 90 day(s)")
        housekeeping.config.audit.retentionDays = 1
        scheduler.advance(by: Housekeeping.auditPruneInterval)
        #expect(storage.auditLog.isEmpty)
        #expect(log.messages.last == "audit log pruned: 1 entry older than 1 day(s)")

        // A failed turn is said, and the next one tries again.
        append(.logout)                          // 3
        clock.advance(byMs: 2 * day)
        storage.failures[.pruneAudit] = .unavailable(retryAfterMs: 1_000)
        scheduler.advance(by: Housekeeping.auditPruneInterval)
        #expect(log.messages.last?.hasPrefix("audit log not pruned: ") == true)
        storage.failures = [:]
        scheduler.advance(by: Housekeeping.auditPruneInterval)
        #expect(storage.auditLog.isEmpty)
    }

    @Test func expiredRowsArePrunedByTheWindowsInForce() {
        housekeeping.config.policy.rateLimitInterval = .seconds(120)
        housekeeping.config.policy.sessionIdle = .seconds(3_600)
        housekeeping.pruneExpired()
        #expect(storage.expiredPrunings.map { [$0.failureWindowMs, $0.tokenIdleMs] } == [[120_000, 3_600_000]])
    }
}

/// Housekeeping as the server holds it: a reload's configuration reaches it, and a shutdown stops its repeats.
@Suite("Housekeeping in the server", .serialized)
struct HousekeepingServerTests {
    @Test func aShutdownCancelsEveryRepeatAndTheLineCountsTheServersConnections() throws {
        let host = try ServerOnFakeStorage()
        var client: FakeStorageClient? = try host.connect()
        try client?.call("session.whoami")
        let notifier = RecordingNotifier(watchdogInterval: .seconds(20))
        host.server.housekeeping.start(notifier: notifier)
        #expect(notifier.lines == ["Serving 1 connection(s), 0 logged in; 0 user(s)"])
        host.server.config.audit.retentionDays = 7
        #expect(host.server.housekeeping.config.audit.retentionDays == 7)
        #expect(host.chores.pendingCount == 5)

        var stopped = false
        host.server.shutdown(gracePeriod: .seconds(5)) { stopped = true }
        #expect(host.chores.pendingCount == 0)
        host.chores.advance(by: .seconds(3_600))
        #expect(notifier.lines.count == 1 && notifier.pings == 0)
        client = nil                             // its socket closes, and the server with it
        for _ in 0..<50 where !stopped { try host.settle() }
        #expect(stopped)
    }
}
