import RosterCore
import RosterProtocol
import RosterRuntime
import RosterStorage
import Testing
@testable import RosterServer

/// What a connection's forms ask of the sessions, recorded with the connection each was for.
private final class RecordingFormSessions: FormSessionHost {
    var policy = DaemonConfig().policy
    private(set) var formEvents: [(FormEvent, UInt64)] = []
    private(set) var events: [(type: String, connection: UInt64, coalescing: String?)] = []
    private(set) var loggedIn: [(username: String, connection: UInt64, tokenHash: [UInt8]?)] = []
    private(set) var revoked: [(hashes: [[UInt8]], except: UInt64?)] = []

    func sendFormEvent(_ event: FormEvent, to connection: Connection) { formEvents.append((event, connection.id)) }

    func sendEvent(_ type: String, _ members: [(String, JSONValue)], to connection: Connection,
                   coalescing key: OutputQueue.CoalesceKey?) {
        events.append((type, connection.id, key))
    }

    func accountRegistered(_ account: Account, by peer: PeerCredentials, from origin: RunningForm?) {}

    func logIn(_ connection: Connection, as user: Account, tokenHash: [UInt8]?) {
        loggedIn.append((user.username, connection.id, tokenHash))
    }

    func tokensRevoked(_ hashes: [[UInt8]], except origin: Connection?) { revoked.append((hashes, origin?.id)) }
}

/// A connection as its forms see it, over a double of the sessions: each call reaches the sessions with that
/// connection, and what it reads is the connection's own.
@Suite("A connection's form session")
struct ConnectionFormSessionTests {
    @Test func forwardsToTheSessionsWithItsConnection() throws {
        let host = try ServerOnFakeStorage()
        let client = try host.connect()
        try client.call("session.hello", ["client": "test", "timing": ["debounce_ms": 120]])
        let connection = try #require(host.server.connections.values.first)
        let sessions = RecordingFormSessions()
        let session = ConnectionFormSession(sessions: sessions, connection: connection)

        #expect(session.debounce == .milliseconds(120) && session.user == nil && session.tokenHash == nil)
        #expect(session.peer.client == "test")
        session.emit(.form(form: .register, submittable: true))
        #expect(sessions.formEvents.map(\.1) == [connection.id])
        #expect(sessions.formEvents.first?.0 == .form(form: .register, submittable: true))

        let account = Account(id: 4, username: "alice1", display: "alice1", email: nil, createdAtMs: 0)
        session.loggedIn(as: account, tokenHash: [1, 2])
        #expect(sessions.loggedIn.map(\.username) == ["alice1"] && sessions.loggedIn.map(\.connection) == [connection.id])
        #expect(sessions.loggedIn.first?.tokenHash == [1, 2])

        // A password change's revocations spare no connection: the one that asked kept its own token.
        session.tokensRevoked([[9], [8]])
        #expect(sessions.revoked.map(\.hashes) == [[[9], [8]]] && sessions.revoked.first.map { $0.except == nil } == true)

        // Contacts results are coalesced, so a peer that does not read gets only the newest.
        session.results(query: "al", items: [], total: 0)
        #expect(sessions.events.map(\.type) == ["results"] && sessions.events.map(\.coalescing) == ["results:contacts"])
        #expect(sessions.events.map(\.connection) == [connection.id])
    }
}
