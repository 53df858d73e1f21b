import Glibc
import RosterProtocol
import RosterStorage
import RosterSQLite
import Testing

/// The audit log (protocol.md §The audit log) against the real daemon, on SQLite: `admin.audit` pages a log written
/// before the start, `[Audit]` budgets follow a SIGHUP, `rosterctl audit` prints the log and follows it live on one
/// connection while a log-in happens on another, and ends well on SIGTERM.
@Suite("The audit log against the real daemon", .serialized)
struct AuditTests {
    private static let config = "[Hashing]\nMemoryKiB=8192\nIterations=1\n"
    /// 2026-12-01T18:00:00Z.
    private static let start: Int64 = 1_796_148_000_000

    /// A daemon whose database already holds `count` entries, one a minute from `start`, alternating alice1's
    /// log-ins and bob123's failed ones.
    private func seeded(_ count: Int, config: String = AuditTests.config) throws -> TestDaemon {
        let directory = try TemporaryDirectory()
        mkdir(directory.path + "/state", 0o700)
        let database = try Database(path: directory.path + "/state/roster.db")
        try Migrator.migrate(database, migrations: RosterSchema.migrations, now: 1)
        let log = AuditLogStore(database: database)
        for index in 0..<count {
            let alice = index.isMultiple(of: 2)
            _ = try log.append(AuditRecord(event: .login, username: alice ? "alice1" : "bob123",
                                           peer: AuditPeer(uid: 1000, pid: Int32(100 + index), client: alice ? "rosterctl" : nil),
                                           outcome: alice ? .succeeded : .failed, reason: alice ? nil : "wrong_password"),
                               at: Self.start + Int64(index) * 60_000)
        }
        database.close()
        // The entries have fixed times; a century's retention keeps the start's prune from them whenever this runs.
        return try TestDaemon(directory: directory, config: config + "[Audit]\nRetentionDays=36500\n")
    }

    private func ids(_ answer: JSONValue) -> [Int64] {
        answer["result"]?["items"]?.arrayValue?.compactMap { $0["id"]?.int64Value } ?? []
    }

    private func reason(_ answer: JSONValue) -> String? { answer["error"]?["data"]?["reason"]?.stringValue }

    @Test func pagesFiltersAndBadParamsOverTheSocket() throws {
        let daemon = try seeded(30)
        let admin = try daemon.connect()
        let first = try admin.call("admin.audit", ["limit": 10])
        #expect(ids(first) == Array((21...30).reversed()))
        #expect(first["result"]?["items"]?.arrayValue?.first == [
            "id": 30, "time": "2026-12-01T18:29:00Z", "event": "login", "username": "bob123", "peer_uid": 1000,
            "peer_pid": 129, "client": nil, "remote": nil, "outcome": "failed", "reason": "wrong_password", "suppressed": 0,
            "method": nil,
        ])
        #expect(ids(try admin.call("admin.audit", ["limit": 10, "before": 21])) == Array((11...20).reversed()))
        #expect(ids(try admin.call("admin.audit", ["username": "alice1", "since": "2026-12-01T19:20:00+01:00"]))
                == [29, 27, 25, 23, 21])
        #expect(ids(try admin.call("admin.audit", ["event": "logout"])) == [])
        #expect(reason(try admin.call("admin.audit", ["since": "yesterday"])) == "not_a_time")
        #expect(try admin.call("admin.audit", ["since": "yesterday"])["error"]?["data"]?["param"] == "since")
        #expect(reason(try admin.call("admin.audit", ["limit": 1_001])) == "out_of_range")
        #expect(reason(try admin.call("admin.audit", ["event": "nope"])) == "out_of_range")
    }

    @Test func theFollowerBudgetFollowsAReload() throws {
        let daemon = try seeded(1, config: Self.config + "[Audit]\nMaxFollowers=1\n")
        let first = try daemon.connect()
        #expect(ids(try first.call("admin.audit", ["follow": true])) == [1])
        let second = try daemon.connect()
        let refused = try second.call("admin.audit", ["follow": true])
        #expect(reason(refused) == "busy")
        #expect(refused["error"]?["data"]?["retry_after_ms"] == 5_000)
        try writeFile(daemon.directory.path + "/rosterd.conf", Self.config + "[Audit]\nMaxFollowers=2\nRetentionDays=36500\n")
        daemon.signal(SIGHUP)
        #expect(daemon.waitForLog("configuration reloaded"))
        #expect(ids(try second.call("admin.audit", ["follow": true])) == [1])
    }

    @Test func rosterctlPrintsTheLogNewestFirstAsATableOrJSONLines() throws {
        let ctl = try Rosterctl(try seeded(3))
        let table = try ctl.run(["audit", "--user", "alice1"])
        #expect(table.status == 0, "\(table.stderr)")
        #expect(table.stdout == """
            TIME                 EVENT USER   OUTCOME   REASON PEER     CLIENT
            2026-12-01T18:02:00Z login alice1 succeeded -      1000/102 rosterctl
            2026-12-01T18:00:00Z login alice1 succeeded -      1000/100 rosterctl

            2 entries listed.

            """)
        let json = try ctl.run(["--json", "audit", "--limit", "2"])
        #expect(json.stdout == """
            {"id":3,"time":"2026-12-01T18:02:00Z","event":"login","username":"alice1","peer_uid":1000,"peer_pid":102,"client":"rosterctl","remote":null,"outcome":"succeeded","reason":null,"suppressed":0,"method":null}
            {"id":2,"time":"2026-12-01T18:01:00Z","event":"login","username":"bob123","peer_uid":1000,"peer_pid":101,"client":null,"remote":null,"outcome":"failed","reason":"wrong_password","suppressed":0,"method":null}

            """)
        #expect(try ctl.run(["--no-legend", "audit", "--since", "2026-12-01T18:01:00Z", "--event", "login"]).stdout
                .split(separator: "\n").count == 2)
        // rosterctl knows the daemon's events: a wrong one is a usage error (2) naming every one `admin.audit` takes.
        let bad = try ctl.run(["--locale", "en", "audit", "--event", "logged_in"])
        #expect(bad.status == 2)
        #expect(bad.stderr == "rosterctl: audit: --event takes one of "
            + AuditEvent.allCases.map(\.rawValue).joined(separator: ", ") + ", not 'logged_in'\n", "\(bad.stderr)")
        #expect(try ctl.run(["audit", "--since", "yesterday"]).status == 2)
    }

    @Test func rosterctlFollowsUntilSIGTERMAndPrintsTheBacklogOldestFirst() throws {
        let ctl = try Rosterctl(try seeded(12))
        let directory = ctl.daemon.directory.path
        let pid = try spawn([builtBinary("rosterctl"), "--socket", ctl.daemon.socketPath, "--json", "audit", "--follow"],
                            environment: ctl.environment, stdoutPath: directory + "/follow.out", stderrPath: directory + "/follow.err")
        #expect(eventually { ((try? readFile(directory + "/follow.out")) ?? "").split(separator: "\n").count == 10 })
        let lines = try readFile(directory + "/follow.out").split(separator: "\n")
        #expect(lines.map { (try? JSONParser.parse(Array($0.utf8)))?["id"]?.int64Value ?? -1 } == Array(3...12))
        kill(pid, SIGTERM)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        let stderr = try readFile(directory + "/follow.err")
        #expect(decode(status) == 0, "\(stderr)")
    }

    @Test func anotherUserIsForbiddenAndToldWhoMay() throws {
        let daemon = try TestDaemon(config: Self.config)
        let ctl = try Rosterctl(daemon)
        chmod(daemon.directory.path, 0o755)
        chmod(daemon.directory.path + "/run", 0o755)
        chmod(daemon.socketPath, 0o666)
        chmod(ctl.runtime, 0o777)
        for follow in [[], ["--follow"]] {
            let result = try capture(["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                      builtBinary("rosterctl"), "--socket", daemon.socketPath, "audit"] + follow, in: daemon.directory)
            #expect(result.status == 1)
            #expect(result.stderr == "rosterctl: audit: administrator commands need root or the daemon's own user (forbidden)\n",
                    "\(result)")
        }
    }
}
