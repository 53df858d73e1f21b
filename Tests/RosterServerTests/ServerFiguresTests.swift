import RosterCore
import RosterRuntime
import RosterStorage
import Testing
@testable import RosterServer

/// The figures `admin.stats` reads, over real connections: they follow the connection table, the counters and
/// the storage feed as they are at the moment of asking.
@Suite("The server's figures")
struct ServerFiguresTests {
    @Test func countConnectionsGreetingsAndRequestsAndFollowTheStorageState() throws {
        let host = try ServerOnFakeStorage()
        let figures = host.server.figures
        #expect(figures.connectionCount == 0 && figures.greetedSessionCount == 0)
        let greeted = try host.connect()
        let silent = try host.connect()
        try greeted.call("session.hello", ["client": "test"])
        try silent.call("session.whoami")
        #expect(figures.connectionCount == 2 && figures.greetedSessionCount == 1)
        #expect(figures.stats.requestsServed == 2 && figures.stats.connectionsAccepted == 2)
        #expect(figures.storageState == host.storage.state)
        let down = StorageState(backend: "memory", phase: .down, sinceMs: 5)
        host.storage.onStateChange?(down)
        #expect(figures.storageState == down)
        #expect(figures.uptime >= .zero)
    }
}
