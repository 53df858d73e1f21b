import RosterCore
import RosterCrypto
import RosterProtocol
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Testing
@testable import RosterServer

/// What another daemon sharing the database does to this one, as the storage's feed reports it: the same events a
/// change made here would give, on every connection it concerns and no other. Each test plays the other daemon's
/// write straight into the in-memory storage, then the change the backend would report, and asserts every
/// client's whole history of events.
@Suite("The server hearing other daemons' changes", .serialized)
struct StorageFeedServerTests {
    private static let available = [
        "field register.username validating/validating r1", "field register.username valid/available r1",
        "field register.password empty/empty r0",
    ]

    /// A register form with `name` typed and judged; its events taken.
    private func registerForm(_ server: ServerOnFakeStorage, typing name: String) throws -> FakeStorageClient {
        let client = try server.connect()
        try client.call("form.open", ["form": "register"])
        try client.call("form.input", ["form": "register", "field": "username", "value": .string(name)])
        try server.advance(ms: 500)
        return client
    }

    /// A client logged in as `username`, and the hash of its token; its events taken.
    private func loggedIn(_ server: ServerOnFakeStorage, as username: String) throws -> (FakeStorageClient, [UInt8]) {
        let (client, token) = try server.loggedIn(as: username)
        return (client, try #require(SessionToken.hash(bearer: token)))
    }

    @Test func aNameRegisteredElsewhereIsTakenOnEveryOpenRegisterFormHoldingIt() throws {
        let server = try ServerOnFakeStorage()
        let alice = try registerForm(server, typing: "Alice1")
        let bob = try registerForm(server, typing: "bob123")
        #expect(try alice.takeEvents() == Self.available)
        #expect(try bob.takeEvents() == Self.available)
        try server.accountMadeElsewhere("alice1")
        server.storage.simulate(.accountCreated(username: "alice1", email: nil))
        #expect(try alice.takeEvents() == ["field register.username invalid/taken r1",
                                           "field register.password empty/empty r0 disabled"])
        #expect(try bob.takeEvents() == [])
    }

    @Test func aNameDeletedElsewhereIsAvailableAgainAndItsSessionsEnd() throws {
        let server = try ServerOnFakeStorage()
        let account = try server.accountMadeElsewhere("alice1", email: "alice@example.com")
        let (session, _) = try loggedIn(server, as: "alice1")
        let form = try registerForm(server, typing: "alice1")
        #expect(try form.takeEvents() == ["field register.username validating/validating r1",
                                          "field register.username invalid/taken r1"])
        server.storage.removeAccount(username: "alice1")
        server.storage.simulate(.accountDeleted(id: account.id, username: "alice1", email: "alice@example.com"))
        #expect(try form.takeEvents() == ["field register.username valid/available r1",
                                          "field register.password empty/empty r0"])
        #expect(try session.takeEvents() == ["session null"])
        #expect(try session.call("session.whoami")["user"] == .null)
    }

    /// An email changed by another daemon reaches this one as its own change does: a register form holding the new
    /// address sees it taken, one holding the old address sees it free, one holding neither hears nothing, and the
    /// user's sessions here know the new address.
    @Test func anEmailChangedElsewhereIsTakenOnFormsHoldingItAndTheOldOneIsFree() throws {
        let server = try ServerOnFakeStorage()
        let alice = try server.accountMadeElsewhere("alice1", email: "old@example.com")
        let (session, _) = try loggedIn(server, as: "alice1")
        func emailForm(_ email: String) throws -> FakeStorageClient {
            let client = try server.connect()
            try client.call("form.open", ["form": "register"])
            try client.call("form.input", ["form": "register", "field": "email", "value": .string(email)])
            return client
        }
        let wantsNew = try emailForm("new@example.com")
        let wantsOld = try emailForm("old@example.com")
        let wantsOther = try emailForm("other@example.com")
        try server.advance(ms: 500)
        #expect(try wantsNew.takeEvents().last == "field register.email valid/valid r1")
        #expect(try wantsOld.takeEvents().last == "field register.email invalid/taken r1")
        #expect(try wantsOther.takeEvents().last == "field register.email valid/valid r1")

        server.storage.acting(for: .daemon).changeEmail(of: alice.id, to: "new@example.com") { _ in }
        server.storage.simulate(.emailChanged(account: alice.id, username: "alice1", email: "new@example.com",
                                              previous: "old@example.com"))
        try server.settle()
        #expect(try wantsNew.takeEvents() == ["field register.email invalid/taken r1"])
        #expect(try wantsOld.takeEvents() == ["field register.email valid/valid r1"])
        #expect(try wantsOther.takeEvents() == [])
        #expect(try session.takeEvents() == [])
        #expect(try session.call("session.whoami")["user"]?["email"] == "new@example.com")

        // Removed elsewhere: free again on the form that wanted it.
        server.storage.acting(for: .daemon).changeEmail(of: alice.id, to: nil) { _ in }
        server.storage.simulate(.emailChanged(account: alice.id, username: "alice1", email: nil, previous: "new@example.com"))
        #expect(try wantsNew.takeEvents() == ["field register.email valid/valid r1"])
        #expect(try wantsOld.takeEvents() == [])
        #expect(try session.call("session.whoami")["user"]?["email"] == nil)
    }

    @Test func aTokenRevokedElsewhereEndsEverySessionBoundToItAndNoOther() throws {
        let server = try ServerOnFakeStorage()
        try server.accountMadeElsewhere("alice1")
        let first = try server.connect()
        let token = try #require(try first.call("auth.login", ["username": "alice1", "password": "secret1"])["token"])
        let resumed = try server.connect()
        #expect(try resumed.call("session.resume", ["token": token])["username"] == "alice1")
        let (other, _) = try loggedIn(server, as: "alice1")
        let hash = try #require(token.stringValue.flatMap(SessionToken.hash(bearer:)))
        server.storage.acting(for: .daemon).revokeToken(hash: hash) { _ in }
        server.storage.simulate(.tokenRevoked(hash: hash))
        #expect(try first.takeEvents() == ["session alice1", "session null"])
        #expect(try resumed.takeEvents() == ["session alice1", "session null"])
        #expect(try other.takeEvents() == [])
        #expect(try other.call("session.whoami")["user"]?["username"] == "alice1")
    }

    /// A lock or a password change elsewhere ends every session of the account, whatever token it holds.
    @Test func sessionsEndedElsewhereLogOutEveryConnectionOfThatAccount() throws {
        let server = try ServerOnFakeStorage()
        let alice = try server.accountMadeElsewhere("alice1")
        try server.accountMadeElsewhere("bob123")
        let (one, _) = try loggedIn(server, as: "alice1")
        let (two, _) = try loggedIn(server, as: "alice1")
        let (bob, _) = try loggedIn(server, as: "bob123")
        server.storage.simulate(.sessionsEnded(account: alice.id))
        #expect(try one.takeEvents() == ["session null"])
        #expect(try two.takeEvents() == ["session null"])
        #expect(try bob.takeEvents() == [])
        #expect(try one.call("contacts.list")["data"]?["reason"] == "unauthenticated")
    }

    /// A resume that read its token before the sessions ended elsewhere, and answers after, logs nothing in.
    @Test func sessionsEndedElsewhereWinOverAResumeUnderWay() throws {
        let server = try ServerOnFakeStorage()
        let alice = try server.accountMadeElsewhere("alice1")
        let first = try server.connect()
        let token = try #require(try first.call("auth.login", ["username": "alice1", "password": "secret1"])["token"])
        let resuming = try server.connect()
        server.storage.answering = .onRelease
        let id = resuming.send("session.resume", ["token": token])
        try server.settle()
        #expect(server.storage.pending == [.resumeToken])
        server.storage.simulate(.sessionsEnded(account: alice.id))
        server.storage.answering = .immediately
        server.storage.releaseAll()
        #expect(try resuming.answer(to: id)["data"]?["reason"] == "not_found")
        #expect(try resuming.takeEvents() == [])
        #expect(try first.takeEvents() == ["session alice1", "session null"])
    }

    @Test func aContactChangedElsewhereRefreshesThatUsersContactsFormsFromAFreshIndex() throws {
        let server = try ServerOnFakeStorage()
        let alice = try server.accountMadeElsewhere("alice1")
        try server.accountMadeElsewhere("bob123")
        let (mine, _) = try loggedIn(server, as: "alice1")
        let (bobs, _) = try loggedIn(server, as: "bob123")
        try mine.call("contacts.add", ["name": "Alice Smith"])
        for client in [mine, bobs] { try client.call("form.open", ["form": "contacts"]) }
        #expect(try mine.takeEvents() == [#"results "" [Alice Smith] of 1"#])
        #expect(try bobs.takeEvents() == [#"results "" [] of 0"#])
        server.storage.acting(for: .daemon).addContact(ContactDraft(name: "Bea Brown", phone: nil, email: nil, note: nil),
                                                       for: alice.id) { _ in }
        server.storage.simulate(.contactsChanged(account: alice.id))
        try server.advance(ms: 300)
        #expect(try mine.takeEvents() == [#"results "" [Alice Smith, Bea Brown] of 2"#])
        #expect(try bobs.takeEvents() == [])
        #expect(try mine.call("contacts.search", ["query": "bb"])["total"] == 1)
    }

    /// After a reconnect the listener may have missed anything: forms ask again, contacts are read again, and a
    /// session whose token is gone ends, while the rest stay as they were.
    @Test func aResyncChecksEverythingAgain() throws {
        let server = try ServerOnFakeStorage()
        let carol = try server.accountMadeElsewhere("carol1")
        try server.accountMadeElsewhere("bob123")
        let form = try registerForm(server, typing: "alice1")
        let (bob, bobsToken) = try loggedIn(server, as: "bob123")
        let (carols, _) = try loggedIn(server, as: "carol1")
        try carols.call("form.open", ["form": "contacts"])
        #expect(try form.takeEvents() == Self.available)
        #expect(try carols.takeEvents() == [#"results "" [] of 0"#])

        // What the other daemon did while this one's listener was away, and never heard of.
        try server.accountMadeElsewhere("alice1")
        server.storage.acting(for: .daemon).revokeToken(hash: bobsToken) { _ in }
        server.storage.acting(for: .daemon).addContact(ContactDraft(name: "Dan Dee", phone: nil, email: nil, note: nil),
                                                       for: carol.id) { _ in }
        server.storage.simulate(.resync)
        try server.advance(ms: 300)
        #expect(try form.takeEvents() == ["field register.username invalid/taken r1",
                                          "field register.password empty/empty r0 disabled"])
        #expect(try bob.takeEvents() == ["session null"])
        #expect(try carols.takeEvents() == [#"results "" [Dan Dee] of 1"#])
        #expect(try carols.call("session.whoami")["user"]?["username"] == "carol1")
        #expect(try carols.call("contacts.list")["total"] == 1)
    }

    /// A lock another daemon made while this one's listener was away: the resync's re-check ends the
    /// locked account's sessions (its token is still stored, but dead), and no one else's.
    @Test func aResyncEndsTheSessionsOfAnAccountLockedElsewhere() throws {
        let server = try ServerOnFakeStorage()
        let carol = try server.accountMadeElsewhere("carol1")
        try server.accountMadeElsewhere("bob123")
        let (bob, _) = try loggedIn(server, as: "bob123")
        let (carols, _) = try loggedIn(server, as: "carol1")
        server.storage.acting(for: .daemon).lockAccount(carol.id, reason: nil) { _ in }
        server.storage.simulate(.resync)
        try server.advance(ms: 300)
        #expect(try carols.takeEvents() == ["session null"])
        #expect(try bob.takeEvents() == [])
    }

    /// A re-check the storage cannot answer now (an outage) ends nothing: nothing is known.
    @Test func aResyncDuringAnOutageEndsNoSession() throws {
        let server = try ServerOnFakeStorage()
        try server.accountMadeElsewhere("bob123")
        let (bob, _) = try loggedIn(server, as: "bob123")
        server.storage.failure = .unavailable(retryAfterMs: 500)
        server.storage.simulate(.resync)
        #expect(try bob.takeEvents() == [])
        server.storage.failure = nil
        #expect(try bob.call("session.whoami")["user"]?["username"] == "bob123")
    }

    /// An outage is logged once when it starts and once when it ends, shown on the status line while it lasts, and
    /// in `admin.stats` throughout; requests that need the database answer `storage_unavailable` meanwhile.
    @Test func anOutageIsLoggedShownAndAnswered() throws {
        let server = try ServerOnFakeStorage()
        let admin = try server.connect()
        let down: Int64 = 1_796_114_460_000
        try server.accountMadeElsewhere("carol1")
        server.storage.changeState(to: .down, atMs: down)
        // Username checks answer from the backend's directory; the write is what needs the database.
        server.storage.failures[.createAccount] = .unavailable(retryAfterMs: 1_000)
        let refused = try admin.call("users.register", ["username": "dave12", "password": "secret1"])
        #expect(refused["code"] == 1041)
        #expect(refused["data"] == ["reason": "storage_unavailable", "retry_after_ms": 1_000])
        server.storage.failure = .unavailable(retryAfterMs: 1_000)
        let login = try admin.call("auth.login", ["username": "carol1", "password": "secret1"])
        #expect(login["data"] == ["reason": "storage_unavailable", "retry_after_ms": 1_000])
        let stats = try admin.call("admin.stats")
        #expect(stats["storage"] == ["backend": "memory", "state": "down", "since": .int(down)])
        #expect(stats["users"] == .null)
        #expect(server.server.housekeeping.statusLine(accounts: nil)
                == "Serving 1 connection(s), 0 logged in; users not counted; storage memory down since 2026-12-01T08:41:00Z")

        server.storage.failure = nil
        server.storage.failures = [:]
        server.storage.changeState(to: .up, atMs: down + 42_000)
        #expect(try admin.call("admin.stats")["storage"] == ["backend": "memory", "state": "up", "since": .int(down + 42_000)])
        #expect(server.server.housekeeping.statusLine(accounts: 0) == "Serving 1 connection(s), 0 logged in; 0 user(s)")
        // A report that changes nothing (the same phase again) is not logged again.
        server.storage.changeState(to: .up, atMs: down + 43_000)
        let storageLines = server.log.messages.filter { $0.hasPrefix("storage ") }
        #expect(storageLines == [
            "storage memory is down since 2026-12-01T08:41:00Z: requests that need it answer storage_unavailable until it is back",
            "storage memory is up again after 42 s down",
        ])
    }
}
