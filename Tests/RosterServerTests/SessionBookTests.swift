import Glibc
import RosterCore
import RosterProtocol
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Testing
@testable import RosterServer

/// The session book across real connections (socketpairs to a server on an in-memory storage): who holds which
/// token, what a revocation ends, and the resumes it races.
@Suite("The session book")
struct SessionBookTests {
    @Test func aRevokedTokenEndsEverySessionBoundToItButTheOneThatAsked() throws {
        let host = try ServerOnFakeStorage()
        try host.accountMadeElsewhere("alice1")
        let (first, token) = try host.loggedIn(as: "alice1")
        let second = try host.connect()
        #expect(try second.call("session.resume", ["token": .string(token)])["username"] == "alice1")
        #expect(try second.takeEvents() == ["session alice1"])
        let book = host.server.sessions
        let hash = try #require(host.server.connections[1]?.session.tokenHash)
        #expect(Array(book.heldTokens().keys) == [hash], "one token, asked about once")

        book.tokenRevoked(hash, except: host.server.connections[1])
        #expect(try first.takeEvents() == [])
        #expect(try second.takeEvents() == ["session null"])
        #expect(Array(book.heldTokens().keys) == [hash])
        book.tokenRevoked(hash)
        #expect(try first.takeEvents() == ["session null"])
        #expect(book.heldTokens().isEmpty)
    }

    @Test func theEndOfAnAccountsSessionsWinsOverAResumeStillUnderWay() throws {
        let host = try ServerOnFakeStorage()
        let alice = try host.accountMadeElsewhere("alice1")
        let book = host.server.sessions
        let racing = book.resumeStarted()
        let unrelated = book.resumeStarted()
        book.endSessions(of: alice.id)
        #expect(book.resumeEnded(startedAt: racing, hash: [1, 2, 3], account: alice.id))
        #expect(!book.resumeEnded(startedAt: unrelated, hash: [4, 5, 6], account: alice.id + 1))
        #expect(book.revocations.keptCount == 0, "nothing is kept once no resume runs")
    }

    @Test func aChangedAccountIsWhatEveryOneOfItsSessionsShows() throws {
        let host = try ServerOnFakeStorage()
        let alice = try host.accountMadeElsewhere("alice1", email: "a@example.org")
        let (first, _) = try host.loggedIn(as: "alice1")
        let (second, _) = try host.loggedIn(as: "alice1")
        var changed = alice
        changed.email = "alice@example.org"
        host.server.sessions.accountChanged(changed, previousEmail: alice.email)
        for client in [first, second] {
            #expect(try client.call("session.whoami") == ["user": ["username": "alice1", "email": "alice@example.org"]])
        }
    }

    @Test func aClosedConnectionLeavesTheTable() throws {
        let host = try ServerOnFakeStorage()
        var client: FakeStorageClient? = try host.connect()
        let other = try host.connect()
        #expect(client != nil && host.server.connectionCount == 2 && host.server.connections.count(uid: getuid()) == 2)
        client = nil
        try host.settle()
        #expect(host.server.connectionCount == 1 && host.server.connections.count(uid: getuid()) == 1)
        withExtendedLifetime(other) {}
    }
}
