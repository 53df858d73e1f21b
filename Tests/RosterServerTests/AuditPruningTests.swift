import RosterCore
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Testing
@testable import RosterServer

/// Housekeeping prunes the audit log at start and every hour on the scheduler (a manual clock here), by the
/// `[Audit] RetentionDays=` in force at each run, and says how many entries went.
@Suite("Pruning the audit log", .serialized)
struct AuditPruningTests {
    private func append(_ host: ServerOnFakeStorage, _ event: AuditEvent) {
        host.storage.acting(for: .daemon).appendAudit(AuditRecord(event: event, username: "alice1", peer: AuditPeer(uid: 1000, pid: 1, client: nil))) { _ in }
    }

    @Test func pruningRunsAtStartAndEveryHourByTheRetentionInForce() throws {
        let host = try ServerOnFakeStorage()
        let day: Int64 = 86_400_000
        append(host, .register)                  // 1: will be 91 days old at the start
        host.clock.advance(byMs: 2 * day)
        append(host, .login)                     // 2: 89 days old at the start
        host.clock.advance(byMs: 89 * day)
        host.server.housekeeping.startAuditPruning()
        #expect(host.storage.auditLog.map(\.id) == [2])
        #expect(host.log.messages.contains("audit log pruned: 1 entry older than 90 day(s)"))

        // An hour later by the scheduler, with a day gone by on the wall clock, entry 2 is past the 90 days.
        host.clock.advance(byMs: day + 1)
        host.chores.advance(by: .seconds(3_599))
        #expect(host.storage.auditLog.map(\.id) == [2])
        host.chores.advance(by: .seconds(1))
        #expect(host.storage.auditLog.map(\.id) == [])

        // A reload's retention is what the next hour prunes by.
        append(host, .logout)                    // 3
        host.clock.advance(byMs: 2 * day)
        host.server.config.audit.retentionDays = 1
        host.chores.advance(by: .seconds(3_600))
        #expect(host.storage.auditLog.map(\.id) == [])
        #expect(host.log.messages.filter { $0.hasPrefix("audit log pruned: 1 entry") }.count == 3)
    }
}
