import RosterCore
import RosterPostgres
import RosterPostgresTesting
import RosterRuntime
import RosterStorage
import Testing

/// A server that goes away and comes back: the pool and the listener on a cluster of their own.
@Suite("PostgreSQL outage")
struct PGOutageTests {
    @Test func poolAndListenerRideOutARestartByThemselves() throws {
        let cluster = try PostgresTestCluster()
        defer { cluster.destroy() }
        let conninfo = try cluster.createDatabase()
        let harness = try LoopHarness()
        var settings = PGPoolSettings(conninfo: conninfo, connections: 2)
        settings.reconnectMinMs = 20
        settings.reconnectMaxMs = 200
        let pool = PGPool(settings: settings, loop: harness.loop, logger: Logger(level: .err))
        var phases: [StorageState.Phase] = []
        pool.onPhaseChange = { phases.append($0) }
        let listener = PGListener(conninfo: conninfo, channels: ["roster", "other \"one\""], loop: harness.loop,
                                  logger: Logger(level: .err), heartbeatMs: 200)
        var listening = 0, disconnected = 0
        var notes: [String] = []
        listener.onListening = { listening += 1 }
        listener.onDisconnected = { disconnected += 1 }
        listener.onNotification = { channel, payload in notes.append(channel + ":" + payload) }
        pool.start()
        listener.start()
        defer { pool.stop(); listener.stop() }
        try harness.run(until: { pool.phase == .up && listening == 1 })
        #expect(phases == [.up])

        let notify = { (payload: String) throws -> Void in
            _ = try harness.answer { pool.execute([PGStatement("SELECT pg_notify('roster', $1)", [.text(payload)]),
                                                   PGStatement("NOTIFY \"other \"\"one\"\"\", 'x'")],
                                                  transaction: true, charge: .daemon, completion: $0) }.get()
        }
        try notify("before")
        try harness.run(until: { notes.count == 2 })
        #expect(notes == ["roster:before", "other \"one\":x"])

        // A request in flight when the server goes is answered `.unavailable` (never resent: it may have committed).
        var inFlight: Result<[PGResult], PGFailure>?
        pool.execute([PGStatement("SELECT pg_sleep(30)")], transaction: false, charge: charge(2)) { inFlight = $0 }
        for _ in 0..<3 { try harness.loop.runOnce(timeoutMs: 10) }
        cluster.stopImmediately()
        try harness.run(until: { pool.phase == .down && disconnected == 1 && inFlight != nil })
        guard case .failure(.unavailable)? = inFlight else { Issue.record("in flight: \(String(describing: inFlight))"); return }
        #expect(phases == [.up, .down])
        // Down: answered at once, not queued.
        var answer: Result<[PGResult], PGFailure>?
        pool.execute([PGStatement("SELECT 1")], transaction: false, charge: charge(1)) { answer = $0 }
        guard case .failure(.unavailable(let retry))? = answer else { Issue.record("while down: \(String(describing: answer))"); return }
        // Never under the first backoff (20 ms here): a shorter hint would only send the client into the same outage.
        #expect(retry >= 20 && retry <= 200)
        var leaseAnswer: Result<PGLease, PGFailure>?
        pool.lease(charge: charge(1)) { leaseAnswer = $0 }
        guard case .failure(.unavailable)? = leaseAnswer else { Issue.record("lease while down: \(String(describing: leaseAnswer))"); return }

        try cluster.start()
        try harness.run(until: { pool.phase == .up && listening == 2 })
        #expect(phases == [.up, .down, .up])
        #expect(disconnected == 1, "each failed reconnect counted as another loss")
        try notify("after")
        try harness.run(until: { notes.count == 4 })
        #expect(notes.suffix(2) == ["roster:after", "other \"one\":x"])
        // The phase is up with the first connection back; the second follows on its own backoff.
        try harness.run(until: { pool.stats.workers == 2 })
    }
}
