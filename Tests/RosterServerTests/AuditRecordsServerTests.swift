import Glibc
import RosterCore
@testable import RosterCrypto
import RosterProtocol
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Testing
@testable import RosterServer

/// Issue 16's audit log as the server writes it, across its connections, on an in-memory storage: every audited
/// event leaves exactly one entry naming the right account, peer (SO_PEERCRED of the socketpair: this process),
/// client, outcome and reason; the journal gets each as a line with native fields; no entry or line holds a
/// password, a code or a token.
@Suite("Audit entries the server writes", .serialized)
struct AuditRecordsServerTests {
    /// The entries written since the last call, each as `event outcome user [reason] [suppressed N]`.
    final class Trail {
        let storage: InMemoryStorage
        private var seen = 0

        init(_ storage: InMemoryStorage) { self.storage = storage }

        func new() -> [String] {
            defer { seen = storage.auditLog.count }
            return storage.auditLog.dropFirst(seen).map(Self.summary)
        }

        static func summary(_ entry: AuditEntry) -> String {
            let record = entry.record
            var parts = [record.event.rawValue, record.outcome.rawValue, record.username ?? "-"]
            if let reason = record.reason { parts.append(reason) }
            if record.suppressed > 0 { parts.append("suppressed \(record.suppressed)") }
            return parts.joined(separator: " ")
        }
    }

    static let client = "audit-test"

    private func greeted(_ server: ServerOnFakeStorage) throws -> FakeStorageClient {
        let connection = try server.connect()
        try connection.call("session.hello", ["client": .string(Self.client)])
        return connection
    }

    private func reason(_ answer: JSONValue) -> String? { answer["data"]?["reason"]?.stringValue }

    /// RFC 4648 base32 without padding, as `account.totp_enroll` shows the secret.
    private func base32Decoded(_ text: String) -> [UInt8] {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var bits: UInt32 = 0, count = 0
        var bytes: [UInt8] = []
        for character in text {
            guard let value = alphabet.firstIndex(of: character) else { continue }
            bits = (bits << 5) | UInt32(value)
            count += 5
            if count >= 8 {
                count -= 8
                bytes.append(UInt8((bits >> UInt32(count)) & 0xFF))
            }
        }
        return bytes
    }

    /// A code that differs from the right one in every digit.
    private func nextDigit(_ digit: Character) -> Character {
        let value = ((digit.wholeNumberValue ?? 0) + 1) % 10
        return Character(String(value))
    }

    @Test func everyAuditedEventLeavesExactlyOneEntryWithItsPeerAndNoSecret() throws {
        let server = try ServerOnFakeStorage()
        // This test's failures all come from one peer within a minute: the cap and the folds of one account's
        // failures are other tests' business.
        server.server.config.audit.failedLoginEntriesPerMinute = 1_000
        server.server.accounts.failedEntries.perAccountPerMinute = 1_000
        let trail = Trail(server.storage)
        var secrets = ["secret1", "wrong12", "better22", "better33", "better44", "nobodys1"]
        let user = try greeted(server)

        // Registration and log-ins.
        #expect(try user.call("users.register", ["username": "alice1", "password": "secret1"])["username"] == "alice1")
        #expect(trail.new() == ["register succeeded alice1"])
        #expect(reason(try user.call("auth.login", ["username": "alice1", "password": "wrong12"])) == "wrong_password")
        #expect(reason(try user.call("auth.login", ["username": "nobody1", "password": "nobodys1"])) == "not_found")
        #expect(trail.new() == ["login failed alice1 wrong_password", "login failed - unknown_user"])
        let firstToken = try #require(try user.call("auth.login", ["username": "alice1", "password": "secret1"])["token"]?
            .stringValue)
        secrets.append(firstToken)
        #expect(trail.new() == ["login succeeded alice1"])

        // Resumes: an unknown token leaves nothing (nobody is named, and anyone could fill the log with them).
        let other = try greeted(server)
        #expect(try other.call("session.resume", ["token": .string(firstToken)])["username"] == "alice1")
        #expect(reason(try other.call("session.resume", ["token": "rst_bogus"])) == "not_found")
        #expect(trail.new() == ["resume succeeded alice1"])

        // Changes that need the password again: a wrong one is the change's own failed entry.
        #expect(reason(try user.call("account.change_password", ["current": "wrong12", "new": "better22"])) == "wrong_password")
        #expect(try user.call("account.change_password", ["current": "secret1", "new": "better22"])["revoked"] != nil)
        #expect(try user.call("account.change_email", ["password": "better22", "email": "alice@example.com"])["email"]
                == "alice@example.com")
        let codes = try #require(try user.call("account.recovery_codes", ["password": "better22"])["codes"]?.arrayValue)
            .compactMap(\.stringValue)
        secrets += codes
        #expect(trail.new() == ["password_changed failed alice1 wrong_password", "password_changed succeeded alice1",
                                "email_changed succeeded alice1", "recovery_codes_created succeeded alice1"])

        // Recovery: a wrong code, then a right one (which logs this connection in).
        let recovering = try greeted(server)
        #expect(reason(try recovering.call("auth.recover", ["username": "alice1", "code": "aaaa-bbbb-cccc-dddd",
                                                            "new_password": "better33"])) == "invalid_code")
        #expect(reason(try recovering.call("auth.recover", ["username": "nobody1", "code": "aaaa-bbbb-cccc-dddd",
                                                            "new_password": "better33"])) == "invalid_code")
        let recovered = try recovering.call("auth.recover", ["username": "alice1", "code": .string(codes[0]),
                                                              "new_password": "better33"])
        secrets.append(try #require(recovered["token"]?.stringValue))
        // The recovery's log-in is a login of its own (method recovery), after what changed.
        #expect(trail.new() == ["recovered failed alice1 invalid_code", "recovered failed - invalid_code",
                                "recovered succeeded alice1", "login succeeded alice1"])

        // TOTP: enrolling changes nothing the log records; confirming does, and a wrong code fails it.
        let enrolled = try recovering.call("account.totp_enroll", ["password": "better33"])
        let secretText = try #require(enrolled["secret"]?.stringValue)
        secrets.append(secretText)
        let nowUnix = server.clock.nowMs() / 1_000
        let code = try #require(TOTP.generate(secret: base32Decoded(secretText), nowUnix: nowUnix))
        let wrong = String(code.map(nextDigit))
        secrets += [code, wrong]
        #expect(reason(try recovering.call("account.totp_confirm", ["code": .string(wrong)])) == "invalid_code")
        #expect(try recovering.call("account.totp_confirm", ["code": .string(code)]) == [:])
        #expect(trail.new() == ["totp_enabled failed alice1 invalid_code", "totp_enabled succeeded alice1"])
        let second = try greeted(server)
        #expect(reason(try second.call("auth.login", ["username": "alice1", "password": "better33"])) == "code_required")
        #expect(reason(try second.call("auth.login", ["username": "alice1", "password": "better33", "code": .string(wrong)]))
                == "invalid_code")
        #expect(trail.new() == ["login failed alice1 invalid_code"], "a code asked for is a step, not a failure")
        #expect(try recovering.call("account.totp_disable", ["password": "better33"]) == [:])
        #expect(trail.new() == ["totp_disabled succeeded alice1"])

        // Sessions revoked one by one, then all the others, then a log-out.
        secrets.append(try #require(try second.call("auth.login", ["username": "alice1", "password": "better33"])["token"]?
            .stringValue))
        let listed = try #require(try recovering.call("session.list")["items"]?.arrayValue)
        let elsewhere = try #require(listed.first { $0["current"] == false }?["id"]?.stringValue)
        #expect(try recovering.call("session.revoke", ["id": .string(elsewhere)]) == [:])
        let third = try greeted(server)
        secrets.append(try #require(try third.call("auth.login", ["username": "alice1", "password": "better33"])["token"]?
            .stringValue))
        #expect(try recovering.call("session.revoke_others")["revoked"] == 1)
        #expect(try recovering.call("session.logout") == [:])
        #expect(trail.new() == ["login succeeded alice1", "session_revoked succeeded alice1", "login succeeded alice1",
                                "session_revoked succeeded alice1", "logout succeeded alice1"])

        // An administrator locks: log-in, resume and recovery fail `locked`, each with its entry.
        let lockedToken = try #require(try third.call("auth.login", ["username": "alice1", "password": "better33"])["token"]?
            .stringValue)
        secrets.append(lockedToken)
        let admin = try greeted(server)
        #expect(try admin.call("admin.users.lock", ["username": "alice@example.com", "reason": "stolen laptop"]) == [:])
        #expect(trail.new() == ["login succeeded alice1", "locked succeeded alice1 stolen laptop"])
        let fresh = try greeted(server)
        #expect(reason(try fresh.call("auth.login", ["username": "alice1", "password": "better33"])) == "locked")
        #expect(reason(try fresh.call("session.resume", ["token": .string(lockedToken)])) == "locked")
        #expect(reason(try fresh.call("auth.recover", ["username": "alice1", "code": .string(codes[1]),
                                                       "new_password": "better44"])) == "locked")
        #expect(trail.new() == ["login failed alice1 locked", "resume failed alice1 locked", "recovered failed alice1 locked"])
        #expect(try admin.call("admin.users.unlock", ["username": "alice1"]) == [:])
        #expect(try admin.call("admin.users.reset_failures", ["username": "alice1"]) == [:])
        #expect(try admin.call("admin.backup", ["path": "/srv/audit-test.db"])["path"] == "/srv/audit-test.db")
        #expect(trail.new() == ["unlocked succeeded alice1", "failures_reset succeeded alice1", "backup succeeded -"])

        // Deletions: by the user (a wrong password first), and by an administrator.
        secrets.append(try #require(try fresh.call("auth.login", ["username": "alice1", "password": "better33"])["token"]?
            .stringValue))
        #expect(reason(try fresh.call("account.delete", ["password": "wrong12"])) == "wrong_password")
        #expect(try fresh.call("account.delete", ["password": "better33"]) == [:])
        #expect(try fresh.call("users.register", ["username": "bob123", "password": "secret1"])["username"] == "bob123")
        #expect(try admin.call("admin.users.delete", ["username": "bob123"]) == [:])
        #expect(trail.new() == ["login succeeded alice1", "deleted failed alice1 wrong_password", "deleted succeeded alice1",
                                "register succeeded bob123", "deleted succeeded bob123"])

        // Every entry names this process as its peer, with the client it said hello as.
        let log = server.storage.auditLog
        // The mail events come with the email methods and the mail sender, the passkey and app-password events
        // with their methods, which this server does not have yet.
        let notYetWritten: Set<AuditEvent> = [.mailQueued, .mailFailed, .emailVerified, .passkeyAdded, .passkeyRemoved,
                                              .passkeyRejected, .appPasswordAdded, .appPasswordRemoved]
        #expect(Set(AuditEvent.allCases).subtracting(log.map(\.record.event)) == notYetWritten, "every event was written")
        for entry in log {
            #expect(entry.record.peer == AuditPeer(uid: getuid(), pid: getpid(), client: Self.client), "\(entry)")
        }
        #expect(log.map(\.id) == Array(1...Int64(log.count)))

        // The journal: one line per entry, with the entry's fields.
        let lines = server.log.kept.filter { $0.message.hasPrefix("audit: ") }
        #expect(lines.count == log.count)
        for (entry, line) in zip(log, lines) {
            let record = entry.record
            #expect(line.message == "audit: \(record.event.rawValue) \(record.outcome.rawValue)")
            #expect(line.fields["ROSTER_EVENT"] == record.event.rawValue)
            #expect(line.fields["ROSTER_USER"] == record.username)
            #expect(line.fields["ROSTER_PEER_UID"] == String(getuid()))
            #expect(line.fields["ROSTER_PEER_PID"] == String(getpid()))
            #expect(line.fields["ROSTER_CLIENT"] == Self.client)
            #expect(line.fields["ROSTER_OUTCOME"] == record.outcome.rawValue)
            #expect(line.fields["ROSTER_REASON"] == record.reason)
            #expect(line.fields["ROSTER_AUDIT_ID"] == String(entry.id))
        }

        // No secret anywhere: not in an entry, not in any log line (message or field).
        let written = log.map { "\($0.record.username ?? "") \($0.record.peer.client ?? "") \($0.record.reason ?? "")" }
            + server.log.kept.map { ([$0.message] + $0.fields.values).joined(separator: " ") }
        // A six-digit code could be part of a number by chance (a pid): it counts only as a word of its own.
        let words = Set(written.flatMap { $0.split { !$0.isLetter && !$0.isNumber }.map(String.init) })
        for secret in secrets {
            let leaked = secret.allSatisfy(\.isNumber) ? words.contains(secret) : written.contains { $0.contains(secret) }
            #expect(!leaked, "\(secret) was written")
        }
    }

    /// `[Audit] FailedLoginEntriesPerMinute=` (here 3, by a reload): past it a peer's failed entries are left out
    /// (their failures still recorded), the next written one carries the count, and a minute that ended with a count
    /// left is summed up by the sweep, once.
    @Test func aPeersFailedEntriesAreCappedPerMinuteAndTheCountIsKept() throws {
        let server = try ServerOnFakeStorage()
        server.server.config.audit.failedLoginEntriesPerMinute = 3
        let trail = Trail(server.storage)
        try server.accountMadeElsewhere("alice1")
        let client = try greeted(server)
        func fail(_ count: Int) throws {
            for index in 0..<count {
                #expect(reason(try client.call("auth.login", ["username": .string("nobody\(index)"), "password": "secret1"]))
                        == "not_found")
            }
        }
        let unknown = "login failed - unknown_user"
        try fail(5)
        #expect(trail.new() == [unknown, unknown, unknown])
        #expect(server.storage.calls.filter { $0 == .recordFailure }.count == 5, "every failure is still recorded")
        // A log-in that works is no failure: never capped.
        #expect(try client.call("auth.login", ["username": "alice1", "password": "secret1"])["token"] != nil)
        #expect(trail.new() == ["login succeeded alice1"])
        server.server.accounts.sweepFailedEntries()
        #expect(trail.new() == [], "the minute has not ended")

        server.clock.advance(byMs: 60_000)
        try fail(5)
        #expect(trail.new() == ["\(unknown) suppressed 2", unknown, unknown])
        server.clock.advance(byMs: 59_999)
        server.server.accounts.sweepFailedEntries()
        #expect(trail.new() == [])
        server.clock.advance(byMs: 1)
        server.server.accounts.sweepFailedEntries()
        server.server.accounts.sweepFailedEntries()
        #expect(trail.new() == ["login failed - suppressed suppressed 2"])
        #expect(server.storage.auditLog.last?.record.peer == AuditPeer(uid: getuid(), pid: getpid(), client: Self.client))
        try fail(1)
        #expect(trail.new() == [unknown], "a summed-up count is not carried again")
    }

    /// Made-up names spend the requester's cap, and then ten wrong passwords on alice1's account are still named:
    /// the first at once, the other nine folded into one entry naming alice1 with the count, at the minute's end.
    @Test func failuresOnARealAccountAreNamedWhateverTheCapLeftAndFoldedWithTheirCount() throws {
        let server = try ServerOnFakeStorage()
        server.server.config.audit.failedLoginEntriesPerMinute = 3
        server.server.config.policy.rateLimitBurst = 100
        let trail = Trail(server.storage)
        try server.accountMadeElsewhere("alice1")
        let client = try greeted(server)
        for index in 0..<12 {
            #expect(reason(try client.call("auth.login", ["username": .string("nobody\(index)"), "password": "secret1"]))
                    == "not_found")
        }
        let unknown = "login failed - unknown_user"
        #expect(trail.new() == [unknown, unknown, unknown])
        for _ in 0..<10 {
            #expect(reason(try client.call("auth.login", ["username": "alice1", "password": "wrong12"])) == "wrong_password")
        }
        #expect(trail.new() == ["login failed alice1 wrong_password"])
        #expect(server.storage.calls.filter { $0 == .recordFailure }.count == 22, "every failure is still recorded")
        server.clock.advance(byMs: 59_999)
        server.server.accounts.sweepFailedEntries()
        #expect(trail.new() == [])
        server.clock.advance(byMs: 1)
        server.server.accounts.sweepFailedEntries()
        #expect(trail.new() == ["login failed - suppressed suppressed 9", "login failed alice1 suppressed suppressed 9"])
        // A new minute: the first wrong password on alice1 is written at once again.
        #expect(reason(try client.call("auth.login", ["username": "alice1", "password": "wrong12"])) == "wrong_password")
        #expect(trail.new() == ["login failed alice1 wrong_password"])
    }

    /// A rate-limited attempt writes nothing else, so its entry is appended on its own; the reason is the real
    /// one even where the client is told less (`RevealUnknownUsers=no`).
    @Test func aRateLimitedLogInHasItsOwnEntry() throws {
        let server = try ServerOnFakeStorage()
        server.server.config.audit.failedLoginEntriesPerMinute = 1_000
        server.server.accounts.failedEntries.perAccountPerMinute = 1_000
        server.server.config.policy.revealUnknownUsers = false
        try server.accountMadeElsewhere("alice1")
        let trail = Trail(server.storage)
        let client = try greeted(server)
        for _ in 0..<server.server.config.policy.rateLimitBurst {
            #expect(reason(try client.call("auth.login", ["username": "alice1", "password": "wrong12"])) == "invalid_credentials")
        }
        #expect(reason(try client.call("auth.login", ["username": "alice1", "password": "secret1"])) == "rate_limited")
        #expect(reason(try client.call("auth.login", ["username": "nobody1", "password": "secret1"])) == "invalid_credentials")
        #expect(trail.new() == Array(repeating: "login failed alice1 wrong_password", count: server.server.config.policy.rateLimitBurst)
                + ["login failed alice1 rate_limited", "login failed - unknown_user"])
    }

    @Test func anEntryFromAnotherDaemonIsNotJournaledHere() throws {
        let server = try ServerOnFakeStorage()
        let entry = AuditEntry(id: 7, timeMs: 1, record: AuditRecord(event: .login, username: "alice1",
                                                                       peer: AuditPeer(uid: 1, pid: 2, client: nil)))
        server.server.auditCommitted(entry, .elsewhere)
        server.server.auditCommitted(entry, .here)
        #expect(server.log.kept.filter { $0.message.hasPrefix("audit: ") }.map(\.fields) == [[
            "ROSTER_EVENT": "login", "ROSTER_USER": "alice1", "ROSTER_PEER_UID": "1", "ROSTER_PEER_PID": "2",
            "ROSTER_OUTCOME": "succeeded", "ROSTER_AUDIT_ID": "7",
        ]])
    }
}
