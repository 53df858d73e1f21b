import Glibc
import RosterCore
import RosterProtocol
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Testing
@testable import RosterServer

/// `admin.audit` across the server's connections, on an in-memory storage (the test's uid is the daemon's, so every
/// client here is an administrator): entries committed by the storage reach the connections that follow with a
/// matching filter, and a follower that stops reading is cut off by its output budget and frees its place.
@Suite("The audit log across connections", .serialized)
struct AuditServerTests {
    private let peer = AuditPeer(uid: 1000, pid: 4242, client: "rosterctl")

    private func append(_ host: ServerOnFakeStorage, _ event: AuditEvent, _ username: String?,
                        outcome: AuditOutcome = .succeeded, reason: String? = nil) {
        host.storage.acting(for: .daemon).appendAudit(AuditRecord(event: event, username: username, peer: peer, outcome: outcome, reason: reason)) { _ in }
    }

    private func ids(_ answer: JSONValue) -> [Int64]? { answer["items"]?.arrayValue?.compactMap { $0["id"]?.int64Value } }

    private func reason(_ answer: JSONValue) -> String? { answer["data"]?["reason"]?.stringValue }

    @Test func aFollowerHearsEveryMatchingEntryAsAnAuditEventUntilItStops() throws {
        let host = try ServerOnFakeStorage()
        append(host, .register, "alice1")
        let follower = try host.connect()
        let all = try host.connect()
        let page = try follower.call("admin.audit", ["follow": true, "username": "alice1"])
        #expect(ids(page) == [1])
        #expect(page["items"]?.arrayValue?.first?["client"] == "rosterctl")
        #expect(ids(try all.call("admin.audit", ["follow": true])) == [1])

        append(host, .login, "alice1")
        append(host, .login, nil, outcome: .failed, reason: "unknown_user")
        #expect(try follower.takeEvents() == ["audit 2 login alice1 succeeded"])
        #expect(try all.takeEvents() == ["audit 2 login alice1 succeeded", "audit 3 login - failed"])

        // A later call replaces the filter.
        #expect(ids(try follower.call("admin.audit", ["follow": true, "event": "logout", "limit": 1])) == [])
        append(host, .login, "alice1")
        append(host, .logout, "bob123")
        #expect(try follower.takeEvents() == ["audit 5 logout bob123 succeeded"])
        #expect(try all.takeEvents() == ["audit 4 login alice1 succeeded", "audit 5 logout bob123 succeeded"])

        #expect(ids(try follower.call("admin.audit", ["follow": false, "limit": 2])) == [5, 4])
        append(host, .logout, "alice1")
        #expect(try follower.takeEvents() == [])
        #expect(try all.takeEvents() == ["audit 6 logout alice1 succeeded"])
        #expect(reason(try all.call("admin.audit", ["since": "an hour ago"])) == "not_a_time")
        #expect(reason(try all.call("admin.audit", ["event": "login_failed"])) == "out_of_range")
    }

    @Test func theFollowerBudgetIsPerDaemonAndAClosedConnectionFreesItsPlace() throws {
        let host = try ServerOnFakeStorage()
        host.server.config.audit.maxFollowers = 2
        let first = try host.connect()
        let second = try host.connect()
        _ = try first.call("admin.audit", ["follow": true])
        _ = try second.call("admin.audit", ["follow": true])
        let third = try host.connect()
        let refused = try third.call("admin.audit", ["follow": true])
        #expect(reason(refused) == "busy")
        #expect(refused["data"]?["retry_after_ms"] == 5_000)
        // Asking without following is never refused by the budget.
        #expect(ids(try third.call("admin.audit")) == [])
        first.hangUp()
        try host.settle()
        #expect(ids(try third.call("admin.audit", ["follow": true])) == [])
        append(host, .backup, nil)
        #expect(try third.takeEvents() == ["audit 1 backup - succeeded"])
        #expect(try second.takeEvents() == ["audit 1 backup - succeeded"])
    }

    /// A follower that stops reading holds at most its own backlog (plus the entry that crossed it): from then on the
    /// entries for it are counted, not queued, so it is never cut off by the connection's hard limit nor does it
    /// spend the daemon's output budget, and a follower that reads hears every entry meanwhile. Once it reads all
    /// its output it hears one `audit_missed` with how many and which ids, and the next entry as usual; the missed
    /// ones read back with `before`.
    @Test func aFollowerThatStopsReadingMissesEntriesBeyondItsBacklogAndHearsHowMany() throws {
        let host = try ServerOnFakeStorage()
        host.server.adminAuditMethods.followerBacklogBytes = 16 << 10
        let sleeper = try host.connect()
        _ = try sleeper.call("admin.audit", ["follow": true])
        let reader = try host.connect()
        _ = try reader.call("admin.audit", ["follow": true])
        var appended: Int64 = 0
        var heard = 0
        while !host.server.adminAuditMethods.followers.isMissing(1) && appended < 20_000 {
            append(host, .login, "alice1", outcome: .failed, reason: "wrong_password")
            appended += 1
            if appended % 100 == 0 { heard += try reader.takeEvents().count }
        }
        let firstMissed = appended
        #expect(host.server.adminAuditMethods.followers.isMissing(1), "the socket took \(appended) entries")
        for _ in 0..<2_000 {
            append(host, .logout, "alice1")
            appended += 1
            if appended % 100 == 0 { heard += try reader.takeEvents().count }
        }
        try host.settle()
        let queued = host.server.sessions.unsentOutputBytes(of: 1)
        #expect(queued > 16 << 10 && queued < (16 << 10) + 1_024, "\(queued)")
        #expect(host.server.connectionCount == 2)
        heard += try reader.takeEvents().count
        #expect(heard == Int(appended))

        var seen: [String] = []
        while true {
            let events = try sleeper.takeEvents()
            if events.isEmpty { break }
            seen += events
        }
        #expect(seen.count == Int(firstMissed))
        #expect(seen.last == "audit_missed \(appended - firstMissed + 1) \(firstMissed)-\(appended)")
        append(host, .backup, nil)
        #expect(try sleeper.takeEvents() == ["audit \(appended + 1) backup - succeeded"])
        let readBack = try sleeper.call("admin.audit", ["before": .int(appended + 1), "limit": 1_000])
        #expect(ids(readBack) == Array((appended - 999...appended).reversed()))
    }

    /// A follower that stops reading meets the same output limits as any connection: its events pile up in its
    /// queue until `OutputHardLimitBytes`, then it is cut off, and its place among the followers is free again.
    @Test func aFollowerThatStopsReadingIsCutOffAndFreesItsPlace() throws {
        let host = try ServerOnFakeStorage()
        host.server.config.audit.maxFollowers = 1
        host.server.config.server.outputSoftLimitBytes = 4 << 10
        host.server.config.server.outputHardLimitBytes = 16 << 10
        let sleeper = try host.connect()
        _ = try sleeper.call("admin.audit", ["follow": true])
        let other = try host.connect()
        #expect(reason(try other.call("admin.audit", ["follow": true])) == "busy")
        var appended = 0
        while host.server.adminAuditMethods.followers.count == 1 && appended < 20_000 {
            append(host, .login, "alice1", outcome: .failed, reason: "wrong_password")
            appended += 1
        }
        #expect(host.server.adminAuditMethods.followers.count == 0)
        #expect(host.log.messages.contains { $0.contains("past OutputHardLimitBytes=16384") })
        #expect(host.server.connectionCount == 1)
        #expect(try other.call("admin.audit", ["follow": true, "limit": 1])["items"]?.arrayValue?.count == 1)
    }
}
