import Glibc
import RosterProtocol
import Testing

/// "audit --follow in one connection sees a log-in made on another", against the real daemon on SQLite:
/// as a raw follower, and as `rosterctl audit --follow`, which ends with exit 0 on Ctrl-C.
@Suite("Following the audit log live", .serialized)
struct AuditFollowTests {
    private static let config = "[Hashing]\nMemoryKiB=8192\nIterations=1\n"

    private func register(_ daemon: TestDaemon, _ username: String) throws {
        let answer = try daemon.connect().call("users.register", ["username": .string(username), "password": "secret1"])
        #expect(answer["result"]?["username"] == .string(username), "\(answer)")
    }

    @Test func aFollowingConnectionSeesALogInMadeOnAnother() throws {
        let daemon = try TestDaemon(config: Self.config)
        try register(daemon, "alice1")
        let admin = try daemon.connect()
        #expect(try admin.call("admin.audit", ["follow": true, "event": "login"])["result"]?["items"] == [])
        let other = try daemon.connect()
        _ = try other.call("session.hello", ["client": "audit-test"])
        #expect(try other.call("auth.login", ["username": "alice1", "password": "secret1"])["result"]?["token"] != nil)
        let event = try admin.waitForEvent { $0["type"] == "audit" }
        let entry = event["entry"]
        #expect(entry?["event"] == "login")
        #expect(entry?["username"] == "alice1")
        #expect(entry?["outcome"] == "succeeded")
        #expect(entry?["client"] == "audit-test")
        #expect(entry?["peer_uid"]?.int64Value == Int64(getuid()))
        #expect(entry?["peer_pid"]?.int64Value == Int64(getpid()))
        // The register entry was not a log-in: the filter kept it away.
        #expect(entry?["id"]?.int64Value ?? 0 > 1)
    }

    @Test func rosterctlAuditFollowPrintsALogInMadeOnAnotherConnectionUntilCtrlC() throws {
        let ctl = try Rosterctl(TestDaemon(config: Self.config))
        try register(ctl.daemon, "alice1")
        let directory = ctl.daemon.directory.path
        let pid = try spawn([builtBinary("rosterctl"), "--socket", ctl.daemon.socketPath, "--json", "audit", "--follow",
                             "--user", "alice1"],
                            environment: ctl.environment, stdoutPath: directory + "/follow.out", stderrPath: directory + "/follow.err")
        // The backlog (the registration) says the follower is in place.
        #expect(eventually { ((try? readFile(directory + "/follow.out")) ?? "").contains(#""event":"register""#) })
        let other = try ctl.daemon.connect()
        #expect(try other.call("auth.login", ["username": "alice1", "password": "secret1"])["result"]?["token"] != nil)
        #expect(eventually { ((try? readFile(directory + "/follow.out")) ?? "").contains(#""event":"login","username":"alice1""#) })
        kill(pid, SIGINT)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        #expect(decode(status) == 0)
        let lines = try readFile(directory + "/follow.out").split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.last?.contains(#""outcome":"succeeded""#) == true)
    }
}
