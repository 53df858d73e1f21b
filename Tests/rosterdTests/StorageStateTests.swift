import Glibc
import RosterPostgresTesting
import RosterProtocol
import Testing

/// rosterd on PostgreSQL, as an administrator watches it through an outage: `admin.stats` and the status line say
/// the storage is down and since when, what needs the database answers `storage_unavailable` at once, and both
/// come back by themselves with the server, each change logged once.
@Suite("rosterd's storage state on PostgreSQL", .serialized)
struct StorageStateTests {
    /// Asks `admin.stats` until its storage reads `state` (or 20 s passed); the last storage seen.
    private func storage(of daemon: TestDaemon, becoming state: String) throws -> JSONValue? {
        var last: JSONValue?
        for _ in 0..<400 {
            let client = try daemon.connect()
            defer { client.close() }
            last = try client.call("admin.stats")["result"]?["storage"]
            if last?["state"] == .string(state) { return last }
            usleep(50_000)
        }
        return last
    }

    @Test func anOutageIsShownAnsweredAndEndsByItself() throws {
        let cluster = try PostgresTestCluster()
        defer { cluster.destroy() }
        let conninfo = try cluster.createDatabase()
        let directory = try TemporaryDirectory()
        let notify = try NotifySocket(in: directory)
        let daemon = try TestDaemon(environment: ["NOTIFY_SOCKET": notify.path], directory: directory,
                                    config: "[Storage]\nBackend=postgresql\n[PostgreSQL]\nConnection=\(conninfo)\nConnections=2\n")
        defer { daemon.stop() }
        _ = notify.next(containing: "READY=1")
        #expect(daemon.waitForLog("storage postgresql '\(conninfo)' with 2 connection(s)"))
        let up = try storage(of: daemon, becoming: "up")
        #expect(up?["backend"] == "postgresql")
        let client = try daemon.connect()
        #expect(try client.call("users.register", ["username": "alice1", "password": "secret1"])["result"] != nil)

        cluster.stopImmediately()
        let down = try storage(of: daemon, becoming: "down")
        #expect(down?["state"] == "down")
        let since = down?["since"]?.int64Value ?? 0
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        #expect(abs(Int64(now.tv_sec) * 1_000 - since) < 30_000, "since is Unix ms by the daemon's clock")
        let refused = try client.call("users.register", ["username": "bob123", "password": "secret1"])
        #expect(refused["error"]?["code"] == 1041)
        #expect(refused["error"]?["data"]?["reason"] == "storage_unavailable")
        #expect((refused["error"]?["data"]?["retry_after_ms"]?.int64Value ?? 0) > 0)
        #expect(notify.next(containing: "storage postgresql down since").contains("STATUS="))
        #expect(daemon.waitForLog("storage postgresql is down since"))

        try cluster.start()
        #expect(try storage(of: daemon, becoming: "up")?["state"] == "up")
        #expect(daemon.waitForLog("storage postgresql is up again after"))
        #expect(try client.call("users.register", ["username": "bob123", "password": "secret1"])["result"] != nil)
        #expect(try client.call("users.check_username", ["username": "alice1"])["result"]?["code"] == "taken")
        #expect(daemon.stderr.components(separatedBy: "is down since").count == 2, "the outage is logged once")
    }
}
