import RosterCore
import RosterCrypto
import RosterProtocol
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Testing
@testable import RosterServer

/// The password form through the whole server (its forms on a manual clock, an in-memory storage, real hashing at
/// the cheapest cost), as clients over socketpairs see it: what the change does to the user's other connections,
/// and what a log-out does to the form.
@Suite("The password form on the server", .serialized)
struct PasswordFormServerTests {
    /// A client logged in as `username`; its events taken.
    private func loggedIn(_ server: ServerOnFakeStorage, as username: String,
                          password: String = "secret1") throws -> FakeStorageClient {
        try server.loggedIn(as: username, password: password).client
    }

    private func type(_ client: FakeStorageClient, _ field: String, _ value: String) throws {
        try client.call("form.input", ["form": "password", "field": .string(field), "value": .string(value)])
    }

    @Test func aChangeThroughTheFormEndsTheUsersOtherSessionsAndKeepsThisOne() throws {
        let server = try ServerOnFakeStorage()
        try server.accountMadeElsewhere("alice1")
        try server.accountMadeElsewhere("bob123")
        let this = try loggedIn(server, as: "alice1")
        let other = try loggedIn(server, as: "alice1")
        let third = try loggedIn(server, as: "alice1")
        let bob = try loggedIn(server, as: "bob123")
        try this.call("form.open", ["form": "password"])
        try type(this, "current", "secret1")
        try type(this, "new", "secret2")
        try server.advance(ms: 500)
        try type(this, "confirm", "secret2")
        try server.advance(ms: 500)
        #expect(try this.takeEvents() == [
            "field password.current valid/entered r1", "field password.new valid/valid r1",
            "field password.confirm empty/empty r0", "field password.confirm valid/valid r1", "form password submittable",
        ])
        #expect(try this.call("form.submit", ["form": "password"]) == ["revoked": 2])
        #expect(try this.takeEvents() == ["submit password running/running", "submit password succeeded/succeeded"])
        #expect(try other.takeEvents() == ["session null"])
        #expect(try third.takeEvents() == ["session null"])
        #expect(try bob.takeEvents() == [])
        #expect(try this.call("session.whoami")["user"]?["username"] == "alice1")
        let again = try server.connect()
        #expect(try again.call("auth.login", ["username": "alice1", "password": "secret1"])["data"]?["reason"]
                == "wrong_password")
        #expect(try again.call("auth.login", ["username": "alice1", "password": "secret2"])["username"] == "alice1")
    }

    @Test func aLogOutClosesThePasswordForm() throws {
        let server = try ServerOnFakeStorage()
        try server.accountMadeElsewhere("alice1")
        let client = try loggedIn(server, as: "alice1")
        try client.call("form.open", ["form": "password"])
        try type(client, "current", "secret1")
        try client.call("session.logout")
        #expect(try client.takeEvents() == ["form password closed", "session null"])
        #expect(try client.call("form.input", ["form": "password", "field": "new", "value": "x"])["data"]?["reason"]
                == "form_not_open")
        #expect(try client.call("form.open", ["form": "password"])["data"]?["reason"] == "unauthenticated")
        // Nothing of the closed form is left to fire.
        try server.advance(ms: 1_000)
        #expect(try client.takeEvents() == [])
    }
}
