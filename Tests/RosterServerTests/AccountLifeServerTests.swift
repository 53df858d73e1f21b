import RosterCore
import RosterCrypto
import RosterProtocol
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Testing
@testable import RosterServer

/// The account-life methods across the server's connections, on an in-memory storage: what a change of the account
/// on one connection does to every other session of the user, and to every open form.
@Suite("Account-life methods across connections", .serialized)
struct AccountLifeServerTests {
    /// A client logged in as `username` (password `secret1`), after a hello naming `client`; its events taken.
    private func loggedIn(_ server: ServerOnFakeStorage, as username: String,
                          client: String = "test") throws -> FakeStorageClient {
        try server.loggedIn(as: username, client: client).client
    }

    @Test func everyMethodButRecoverNeedsALoggedInSession() throws {
        let server = try ServerOnFakeStorage()
        let nobody = try server.connect()
        let calls: [(String, JSONValue)] = [
            ("account.show", [:]), ("account.change_password", ["current": "secret1", "new": "better22"]),
            ("account.change_email", ["password": "secret1", "email": ""]), ("account.delete", ["password": "secret1"]),
            ("account.export", [:]), ("session.list", [:]), ("session.revoke", ["id": "0011223344556677"]),
            ("session.revoke_others", [:]), ("account.recovery_codes", ["password": "secret1"]),
            ("account.totp_enroll", ["password": "secret1"]), ("account.totp_confirm", ["code": "123456"]),
            ("account.totp_disable", ["password": "secret1"]),
        ]
        for (method, params) in calls {
            let answer = try nobody.call(method, params)
            #expect(answer["data"]?["reason"] == "unauthenticated", "\(method): \(answer)")
        }
        let recover = try nobody.call("auth.recover", ["username": "nobody9", "code": "abcd-efgh-ijkl-mnop",
                                                       "new_password": "better22"])
        #expect(recover["data"]?["reason"] == "invalid_code")
    }

    @Test func aPasswordChangeEndsEveryOtherSessionOfTheUserAndKeepsThisOne() throws {
        let server = try ServerOnFakeStorage()
        try server.accountMadeElsewhere("alice1")
        try server.accountMadeElsewhere("bob123")
        let mine = try loggedIn(server, as: "alice1")
        let other = try loggedIn(server, as: "alice1")
        let bob = try loggedIn(server, as: "bob123")
        let answer = try mine.call("account.change_password", ["current": "secret1", "new": "better22"])
        #expect(answer == ["revoked": 1])
        #expect(try other.takeEvents() == ["session null"])
        #expect(try mine.takeEvents() == [])
        #expect(try bob.takeEvents() == [])
        #expect(try mine.call("session.whoami")["user"]?["username"] == "alice1")
    }

    @Test func sessionsAreListedWithTheirClientAndRevokedByTheirID() throws {
        let server = try ServerOnFakeStorage()
        try server.accountMadeElsewhere("alice1")
        let first = try loggedIn(server, as: "alice1", client: "one")
        server.clock.advance(byMs: 1_000)
        let second = try loggedIn(server, as: "alice1", client: "two")
        server.clock.advance(byMs: 1_000)
        let third = try loggedIn(server, as: "alice1", client: "three")
        let items = try #require(try first.call("session.list")["items"]?.arrayValue)
        #expect(items.map { $0["client"]?.stringValue } == ["one", "two", "three"])
        #expect(items.map { $0["current"]?.boolValue } == [true, false, false])
        #expect(items.allSatisfy { ($0["id"]?.stringValue?.utf8.count ?? 0) == 16 })
        let secondID = try #require(items[1]["id"])
        #expect(try first.call("session.revoke", ["id": secondID]) == [:])
        #expect(try second.takeEvents() == ["session null"])
        #expect(try first.call("session.revoke", ["id": secondID])["data"]?["reason"] == "not_found")
        #expect(try first.call("session.revoke_others") == ["revoked": 1])
        #expect(try third.takeEvents() == ["session null"])
        #expect(try first.takeEvents() == [])
        #expect(try first.call("session.list")["items"]?.arrayValue?.count == 1)
    }

    @Test func aDeletionEndsEverySessionClosesContactsFormsAndFreesTheName() throws {
        let server = try ServerOnFakeStorage()
        try server.accountMadeElsewhere("alice1", email: "alice@example.com")
        let mine = try loggedIn(server, as: "alice1")
        let other = try loggedIn(server, as: "alice1")
        try other.call("form.open", ["form": "contacts"])
        _ = try other.takeEvents()
        let register = try server.connect()
        try register.call("form.open", ["form": "register"])
        try register.call("form.input", ["form": "register", "field": "username", "value": "alice1"])
        try server.advance(ms: 500)
        #expect(try register.takeEvents().last == "field register.username invalid/taken r1")
        #expect(try mine.call("account.delete", ["password": "nope123"])["data"]?["reason"] == "wrong_password")
        #expect(try mine.call("account.delete", ["password": "secret1"]) == [:])
        #expect(try mine.takeEvents() == ["session null"])
        #expect(try other.takeEvents() == ["form contacts closed", "session null"])
        #expect(try register.takeEvents().contains("field register.username valid/available r1"))
        #expect(try register.call("users.register", ["username": "alice1", "password": "secret1"]) == ["username": "alice1"])
    }

    @Test func anEmailChangeShowsOnEverySessionOfTheUser() throws {
        let server = try ServerOnFakeStorage()
        try server.accountMadeElsewhere("alice1", email: "alice@example.com")
        let mine = try loggedIn(server, as: "alice1")
        let other = try loggedIn(server, as: "alice1")
        #expect(try mine.call("account.change_email", ["password": "secret1", "email": "New@Example.com"])
            == ["email": "new@example.com"])
        #expect(try other.call("session.whoami")["user"]?["email"] == "new@example.com")
        #expect(try other.call("account.show")["email"] == "new@example.com")
    }

    @Test func anOpenRegisterFormHoldingTheNewEmailSeesItTakenAndTheOldOneFree() throws {
        let server = try ServerOnFakeStorage()
        try server.accountMadeElsewhere("alice1", email: "old@example.com")
        let mine = try loggedIn(server, as: "alice1")
        let wantsNew = try server.connect()
        try wantsNew.call("form.open", ["form": "register"])
        try wantsNew.call("form.input", ["form": "register", "field": "email", "value": "new@example.com"])
        let wantsOld = try server.connect()
        try wantsOld.call("form.open", ["form": "register"])
        try wantsOld.call("form.input", ["form": "register", "field": "email", "value": "old@example.com"])
        try server.advance(ms: 500)
        #expect(try wantsNew.takeEvents().last == "field register.email valid/valid r1")
        #expect(try wantsOld.takeEvents().last == "field register.email invalid/taken r1")
        _ = try mine.call("account.change_email", ["password": "secret1", "email": "new@example.com"])
        try server.advance(ms: 500)
        #expect(try wantsNew.takeEvents().contains("field register.email invalid/taken r1"))
        #expect(try wantsOld.takeEvents().contains("field register.email valid/valid r1"))
    }
}
