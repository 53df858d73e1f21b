import Foundation
import RosterProtocol
import RosterSQLite
import Testing

/// An answered write survives `kill -9`; an unanswered one may or may not, but the file is never torn.
@Suite("Crash safety", .serialized)
struct CrashSafetyTests {
    private static let config = "[Hashing]\nMemoryKiB=8192\nIterations=1\nQueueLimit=4096\n[Login]\nRateLimitBurst=100000\n"

    /// Runs 1,000 requests over `clients` connections at once, kills the daemon with SIGKILL `killAfterMs` after the
    /// first acknowledgement (so a slow build still kills mid-storm), and returns the acknowledged requests' keys.
    private func storm(_ daemon: TestDaemon, clients: Int, killAfterMs: Int,
                       prepare: @escaping @Sendable (TestClient) throws -> Void,
                       request: @escaping @Sendable (Int, Int) -> (key: String, line: String)) throws -> [String] {
        try RequestStorm.run(daemon, clients: clients, perClient: 1_000 / clients, faultAfterMs: killAfterMs,
                             prepare: prepare, request: request) {
            daemon.signal(SIGKILL)
            _ = daemon.waitForExit()
        }.acknowledged
    }

    @Test func everyAcknowledgedRegistrationSurvivesKillNine() throws {
        let daemon = try TestDaemon(config: Self.config)
        let killAfter = Int.random(in: 0...800)
        let acknowledged = try storm(daemon, clients: 50, killAfterMs: killAfter, prepare: { _ in }) { client, index in
            let name = "crash\(client)x\(index)"
            return (name, "{\"id\":\(index),\"method\":\"users.register\",\"params\":{\"username\":\"\(name)\",\"password\":\"pw-\(name)\"}}\n")
        }
        #expect(!acknowledged.isEmpty, "nothing was acknowledged within \(killAfter) ms")
        let restarted = try TestDaemon(directory: daemon.directory, config: Self.config)
        let client = try restarted.connect()
        for name in acknowledged {
            let login = try client.call("auth.login", ["username": .string(name), "password": .string("pw-" + name)])
            #expect(login["result"]?["username"] == .string(name), "\(name) was acknowledged but cannot log in")
        }
        #expect(try Database(path: restarted.databasePath).pragmaValue("PRAGMA integrity_check") == "ok")
    }

    @Test func everyAcknowledgedContactSurvivesKillNine() throws {
        let daemon = try TestDaemon(config: Self.config)
        let setup = try daemon.connect()
        _ = try setup.call("users.register", ["username": "keeper1", "password": "secret1"])
        let killAfter = Int.random(in: 0...150)
        let acknowledged = try storm(daemon, clients: 50, killAfterMs: killAfter, prepare: { connection in
            _ = try connection.call("auth.login", ["username": "keeper1", "password": "secret1"])
        }) { client, index in
            let name = "Contact \(client)-\(index)"
            return (name, "{\"id\":\(index),\"method\":\"contacts.add\",\"params\":{\"name\":\"\(name)\"}}\n")
        }
        #expect(!acknowledged.isEmpty, "nothing was acknowledged within \(killAfter) ms")
        let restarted = try TestDaemon(directory: daemon.directory, config: Self.config)
        let client = try restarted.connect()
        _ = try client.call("auth.login", ["username": "keeper1", "password": "secret1"])
        let listed = try client.call("contacts.list", ["limit": 1_000])
        let names = Set((listed["result"]?["items"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue })
        for name in acknowledged { #expect(names.contains(name), "\(name) was acknowledged but is gone") }
        #expect(try Database(path: restarted.databasePath).pragmaValue("PRAGMA integrity_check") == "ok")
    }
}

/// A value shared between test threads under a lock.
final class Locked<Value>: @unchecked Sendable {
    private var stored: Value
    private let lock = NSLock()

    init(_ value: Value) { stored = value }

    var value: Value { lock.withLock { stored } }

    func mutate(_ body: (inout Value) -> Void) { lock.withLock { body(&stored) } }
}

/// Hands a non-Sendable value to exactly one other thread, which alone uses it from then on.
struct Transfer<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
