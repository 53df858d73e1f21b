import RosterCore
import RosterProtocol
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Testing
@testable import RosterServer

/// `admin.users.*` across the server's connections, on an in-memory storage (the test's uid is the daemon's, so
/// every client here is an administrator): a lock ends the user's sessions at once and log-in, resume and recovery
/// answer `locked` until an unlock, which brings back log-in and not the old tokens.
@Suite("Admin user methods across connections", .serialized)
struct AdminUsersServerTests {
    private func loggedIn(_ server: ServerOnFakeStorage, as username: String) throws -> (FakeStorageClient, String) {
        try server.loggedIn(as: username)
    }

    private func reason(_ answer: JSONValue) -> String? { answer["data"]?["reason"]?.stringValue }

    @Test func aLockEndsEverySessionAndLogInResumeAndRecoveryAnswerLockedUntilUnlocked() throws {
        let server = try ServerOnFakeStorage()
        try server.accountMadeElsewhere("alice1", email: "alice@example.com")
        try server.accountMadeElsewhere("bob123")
        let (first, token) = try loggedIn(server, as: "alice1")
        let (second, _) = try loggedIn(server, as: "alice1")
        let (bob, _) = try loggedIn(server, as: "bob123")
        let admin = try server.connect()

        let lockedAt = UTCTime.rfc3339(unixMs: server.clock.nowMs())
        #expect(try admin.call("admin.users.lock", ["username": "alice@example.com", "reason": "stolen laptop"]) == [:])
        server.clock.advance(byMs: 60_000)
        #expect(try first.takeEvents() == ["session null"])
        #expect(try second.takeEvents() == ["session null"])
        #expect(try bob.takeEvents() == [])

        let fresh = try server.connect()
        #expect(reason(try fresh.call("session.resume", ["token": .string(token)])) == "locked")
        #expect(reason(try fresh.call("auth.login", ["username": "alice1", "password": "secret1"])) == "locked")
        // The wrong password reads as it always has: `locked` is said only to whoever knows the password.
        #expect(reason(try fresh.call("auth.login", ["username": "alice1", "password": "wrong12"])) == "wrong_password")
        // Nor does a recovery say `locked` to a made-up code: that is said only to a right one.
        #expect(reason(try fresh.call("auth.recover", ["username": "alice1", "code": "abcd-efgh-ijkl-mnop",
                                                       "new_password": "better22"])) == "invalid_code")
        let shown = try admin.call("admin.users.show", ["username": "alice1"])["user"]
        #expect(shown?["locked"] == true)
        #expect(shown?["sessions"] == 0)
        #expect(shown?["failed_logins"] == 2)
        // The lock's time (a second lock keeps the first) and reason, as given.
        #expect(shown?["locked_at"] == .string(lockedAt))
        #expect(shown?["locked_reason"] == "stolen laptop")
        #expect(try admin.call("admin.users.lock", ["username": "alice1"]) == [:])
        let relocked = try admin.call("admin.users.show", ["username": "alice1"])["user"]
        #expect(relocked?["locked_at"] == .string(lockedAt))
        #expect(relocked?["locked_reason"] == .null, "a lock without a reason has none")

        #expect(try admin.call("admin.users.unlock", ["username": "alice1"]) == [:])
        #expect(reason(try fresh.call("session.resume", ["token": .string(token)])) == "not_found")
        #expect(try fresh.call("auth.login", ["username": "alice1", "password": "secret1"])["token"] != nil)
        let unlocked = try admin.call("admin.users.show", ["username": "alice1"])["user"]
        #expect(unlocked?["locked"] == false)
        #expect(unlocked?["locked_at"] == .null)
        #expect(unlocked?["locked_reason"] == .null)
    }

    @Test func aResetLiftsTheAccountsRateLimit() throws {
        let server = try ServerOnFakeStorage()
        try server.accountMadeElsewhere("alice1")
        let client = try server.connect()
        var last: String?
        for _ in 0..<50 {
            last = reason(try client.call("auth.login", ["username": "alice1", "password": "wrong12"]))
            if last == "rate_limited" { break }
        }
        #expect(last == "rate_limited")
        #expect(reason(try client.call("auth.login", ["username": "alice1", "password": "secret1"])) == "rate_limited")
        let admin = try server.connect()
        #expect(try admin.call("admin.users.reset_failures", ["username": "alice1"]) == [:])
        #expect(try admin.call("admin.users.show", ["username": "alice1"])["user"]?["failed_logins"] == 0)
        #expect(try client.call("auth.login", ["username": "alice1", "password": "secret1"])["token"] != nil)
    }

    @Test func theListPagesByUsernameWithAQueryAndShowTellsTheDetails() throws {
        let server = try ServerOnFakeStorage()
        for index in 0..<25 {
            try server.accountMadeElsewhere("user\(index < 10 ? "0" : "")\(index)",
                                            email: index.isMultiple(of: 5) ? "u\(index)@corp.example" : nil)
        }
        let admin = try server.connect()
        let page = try admin.call("admin.users.list", ["query": "user1", "limit": 4, "offset": 2])
        #expect(page["items"]?.arrayValue?.map { $0["username"]?.stringValue } == ["user12", "user13", "user14", "user15"])
        #expect(page["total"] == 10)
        let corp = try admin.call("admin.users.list", ["query": "CORP"])
        #expect(corp["items"]?.arrayValue?.map { $0["username"]?.stringValue } == ["user00", "user05", "user10", "user15", "user20"])
        let item = try #require(corp["items"]?.arrayValue?.first)
        #expect(item["email"] == "u0@corp.example")
        #expect(item["last_login_at"] == .null)
        #expect(item["locked"] == false)
        #expect(item["totp"] == false)
        #expect(item["created_at"]?.stringValue?.hasSuffix("Z") == true)
        #expect(try admin.call("admin.users.list")["total"] == 25)
        #expect(reason(try admin.call("admin.users.list", ["limit": 0])) == "out_of_range")
        #expect(reason(try admin.call("admin.users.show", ["username": "nobody9"])) == "not_found")
        #expect(reason(try admin.call("admin.users.lock", ["username": "user01",
                                                           "reason": .string(String(repeating: "x", count: 201))]))
                == "too_long")
        #expect(reason(try admin.call("admin.users.lock", ["username": "user01", "reason": "a\nb"])) == "control_character")
    }

    @Test func anAdministratorsDeletionEndsTheSessionsAndFreesTheName() throws {
        let server = try ServerOnFakeStorage()
        try server.accountMadeElsewhere("alice1")
        let (alice, _) = try loggedIn(server, as: "alice1")
        let admin = try server.connect()
        #expect(try admin.call("admin.users.delete", ["username": "alice1"]) == [:])
        #expect(try alice.takeEvents() == ["session null"])
        #expect(reason(try admin.call("admin.users.delete", ["username": "alice1"])) == "not_found")
        #expect(try admin.call("users.register", ["username": "alice1", "password": "secret1"]) == ["username": "alice1"])
    }
}
