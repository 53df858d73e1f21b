import Glibc
import RosterProtocol
import Testing

/// The per-browser identity against the real daemon: a trusted gateway's connections say whom they speak
/// for (`session.hello` `remote`), and each remote then has its own failed-log-in limit and audit cap, apart from
/// the gateway uid's own, and is named by its audit entries; an untrusted peer may not say it, until
/// `[Server] GatewayUsers=` names it.
@Suite("Remote identities against the real daemon", .serialized)
struct RemoteIdentityTests {
    /// Burst 1: each unknown name fails once before its own limit, the peer's allows ten; three entries a minute
    /// per requester.
    private static let config = "[Hashing]\nMemoryKiB=8192\nIterations=1\n[Login]\nRateLimitBurst=1\n"
        + "[Audit]\nFailedLoginEntriesPerMinute=3\n"

    private func reason(_ answer: JSONValue) -> String? { answer["error"]?["data"]?["reason"]?.stringValue }

    private func connection(_ daemon: TestDaemon, remote: String?) throws -> TestClient {
        let client = try daemon.connect()
        var params: [(String, JSONValue)] = [("client", "roster-web")]
        if let remote { params.append(("remote", .string(remote))) }
        let hello = try client.call("session.hello", .object(params))
        #expect(hello["result"]?["remote"] == remote.map(JSONValue.string), "\(hello)")
        return client
    }

    /// Fails log-ins with names nobody holds (each its own account key) until the peer key answers `rate_limited`;
    /// how many failed first.
    private func failUntilLimited(_ client: TestClient, tag: String) throws -> Int {
        for attempt in 0..<30 {
            let answer = try client.call("auth.login", ["username": .string("ghost\(tag)\(attempt)"), "password": "wrong12"])
            if reason(answer) == "rate_limited" { return attempt }
            #expect(reason(answer) == "not_found", "\(answer)") // the seed policy reveals unknown names
        }
        return -1
    }

    /// Whether one more made-up name from this connection's requester is answered `rate_limited`.
    private func unknownNameIsLimited(_ client: TestClient) throws -> Bool {
        // A fresh name each time, so that the name's own count (burst 1) never answers for the requester's.
        let name = "ghost\(UInt64.random(in: 1...UInt64.max))"
        return reason(try client.call("auth.login", ["username": .string(name), "password": "wrong12"])) == "rate_limited"
    }

    private func logIn(_ client: TestClient) throws -> JSONValue {
        try client.call("auth.login", ["username": "alice1", "password": "secret1"])
    }

    @Test func eachRemoteHasItsOwnFailedLogInLimitAndTheUIDKeepsItsOwn() throws {
        let daemon = try TestDaemon(config: Self.config)
        #expect(daemon.waitForLog("session.hello remote is taken from uids 0"))
        _ = try daemon.connect().call("users.register", ["username": "alice1", "password": "secret1"])

        let a = try connection(daemon, remote: "203.0.113.5")
        #expect(try failUntilLimited(a, tag: "a") == 10)
        // Another browser behind the same gateway uid is not held back by the first one's guesses.
        let b = try connection(daemon, remote: "203.0.113.6")
        #expect(try failUntilLimited(b, tag: "b") == 10)
        #expect(try unknownNameIsLimited(try connection(daemon, remote: "203.0.113.5")))

        // IPv6 counts by /64: another address of it is the same subscriber; the next /64 is not.
        let v6 = try connection(daemon, remote: "2001:db8:0:1::1")
        #expect(try failUntilLimited(v6, tag: "v6") == 10)
        #expect(try unknownNameIsLimited(try connection(daemon, remote: "2001:db8:0:1:ffff::2")))
        #expect(try failUntilLimited(try connection(daemon, remote: "2001:db8:0:2::1"), tag: "v6b") == 10)

        // Without a remote a connection counts by its uid, as before: across connections, apart from the remotes.
        let plain = try connection(daemon, remote: nil)
        #expect(try failUntilLimited(plain, tag: "uid") == 10)
        #expect(try unknownNameIsLimited(try connection(daemon, remote: nil)))
        #expect(try failUntilLimited(try connection(daemon, remote: "198.51.100.1"), tag: "c") == 10)
        // Made-up names limit only made-up names: alice1's right password still logs in from each of them.
        for remote in ["203.0.113.6", "2001:db8:0:2::1", "198.51.100.1"] {
            #expect(try logIn(try connection(daemon, remote: remote))["result"]?["token"] != nil)
        }

        // The failed-entry cap is per requester too: three entries for each of the three that failed (the rest
        // were left out, to be summed up once their minute ends), where one cap per uid would have kept three.
        let entries = try daemon.connect().call("admin.audit", ["event": "login", "limit": 1_000])["result"]?["items"]?
            .arrayValue ?? []
        let failed = entries.filter { $0["outcome"] == "failed" }
        #expect(failed.count == 18, "\(failed)")
        // Each entry names the remote it was written for (canonical), or none; three per requester.
        let byRemote = Dictionary(grouping: failed) { $0["remote"].map { $0.stringValue ?? "null" } ?? "absent" }
            .mapValues(\.count)
        #expect(byRemote == ["203.0.113.5": 3, "203.0.113.6": 3, "2001:db8:0:1::1": 3, "2001:db8:0:2::1": 3,
                             "198.51.100.1": 3, "null": 3], "\(failed)")
        let succeeded = entries.filter { $0["outcome"] == "succeeded" }.compactMap { $0["remote"]?.stringValue }
        #expect(Set(succeeded) == ["203.0.113.6", "2001:db8:0:2::1", "198.51.100.1"], "\(entries)")
        #expect(entries.allSatisfy { $0["client"] == "roster-web" && $0["peer_uid"] == 0 })
    }

    @Test func anUntrustedPeerIsForbiddenARemoteUntilGatewayUsersNamesIt() throws {
        let daemon = try TestDaemon(config: Self.config)
        chmod(daemon.directory.path, 0o755)
        chmod(daemon.directory.path + "/run", 0o755)
        chmod(daemon.socketPath, 0o666)
        let request = daemon.directory.path + "/request.json"
        try writeFile(request, #"{"jsonrpc":"2.0","id":1,"method":"session.hello","params":{"locale":"en","remote":"203.0.113.5"}}"#
                      + "\n" + #"{"jsonrpc":"2.0","id":2,"method":"session.hello","params":{"locale":"en"}}"# + "\n")
        func helloAsNobody() throws -> [JSONValue] {
            let result = try capture(["/bin/sh", "-c", "setpriv --reuid=65534 --regid=65534 --clear-groups "
                                      + "socat -t 2 - UNIX-CONNECT:\(daemon.socketPath) < \(request)"], in: daemon.directory)
            return try result.stdout.split(separator: "\n").map { try JSONParser.parse(Array($0.utf8)) }
        }
        let refused = try helloAsNobody()
        #expect(refused.count == 2)
        #expect(refused.first?["error"]?["code"] == 1031 && reason(refused.first ?? nil) == "forbidden", "\(refused)")
        // Nothing of the refused hello applied; a hello without remote is fine.
        #expect(refused.last?["result"]?["locale"] == "en" && refused.last?["result"]?["remote"] == nil, "\(refused)")

        // By name, looked up at the reload.
        try writeFile(daemon.directory.path + "/rosterd.conf", Self.config + "[Server]\nGatewayUsers=nobody\n")
        daemon.signal(SIGHUP)
        #expect(daemon.waitForLog("session.hello remote is taken from uids 0 65534"))
        let accepted = try helloAsNobody()
        #expect(accepted.first?["result"]?["remote"] == "203.0.113.5", "\(accepted)")
        #expect(accepted.last?["result"]?["remote"] == "203.0.113.5", "\(accepted)")
    }

    /// A connection that speaks for a browser carries what the browser sent: even from root (the uid the daemon runs
    /// as here, so both administrator uids at once), every `admin.*` on it is `forbidden`, before anything is read
    /// or written; the same uid without a remote keeps its rights.
    @Test func aConnectionWithARemoteHasNoAdministratorRightsEvenAsRoot() throws {
        let daemon = try TestDaemon(config: Self.config)
        _ = try daemon.connect().call("users.register", ["username": "alice1", "password": "secret1"])
        let browser = try connection(daemon, remote: "203.0.113.5")
        let backup = daemon.directory.path + "/by-browser.db"
        let calls: [(String, JSONValue)] = [
            ("admin.stats", [:]), ("admin.audit", [:]), ("admin.users.list", [:]),
            ("admin.users.show", ["username": "alice1"]), ("admin.users.lock", ["username": "alice1"]),
            ("admin.users.reset_failures", ["username": "alice1"]), ("admin.users.delete", ["username": "alice1"]),
            ("admin.backup", ["path": .string(backup)]),
        ]
        for (method, params) in calls {
            let answer = try browser.call(method, params)
            #expect(answer["error"]?["code"] == 1031 && reason(answer) == "forbidden", "\(method): \(answer)")
        }
        #expect(access(backup, F_OK) != 0)
        let own = try connection(daemon, remote: nil)
        #expect(try own.call("admin.stats")["result"]?["users"] == 1)
        let shown = try own.call("admin.users.show", ["username": "alice1"])["result"]?["user"]
        #expect(shown?["locked"] == false, "\(String(describing: shown))")
    }

    /// One browser's (or one uid's) flood of made-up names limits its made-up names, and no one's right password:
    /// not another browser's behind the same address, not another user's on the same uid. Wrong passwords on real
    /// accounts still count, per account and per requester, and once a requester has sprayed ten accounts' worth
    /// every name it tries is limited, right password or not.
    @Test func madeUpNamesLimitOnlyMadeUpNamesAndASprayOfRealAccountsStopsEverything() throws {
        let daemon = try TestDaemon(config: Self.config)
        let admin = try daemon.connect()
        for name in ["alice1"] + (0..<10).map({ "real\($0)x" }) {
            _ = try admin.call("users.register", ["username": .string(name), "password": "secret1"])
        }
        for remote in ["203.0.113.5", nil] {
            // A hundred made-up names: ten accounts' worth at burst 1 (the peer limit is ten times it).
            let flood = try connection(daemon, remote: remote)
            #expect(try failUntilLimited(flood, tag: remote ?? "uid") == 10)
            #expect(try unknownNameIsLimited(flood))
            // Another person on the same requester: their right password logs in, at once.
            let other = try connection(daemon, remote: remote)
            #expect(try logIn(other)["result"]?["token"] != nil, "\(remote ?? "uid")")
        }

        // A spray of wrong passwords over ten real accounts from one browser: the eleventh is limited, on a real
        // name with its right password and on a made-up one alike; another browser is not held back.
        let sprayer = try connection(daemon, remote: "198.51.100.7")
        for index in 0..<10 {
            let answer = try sprayer.call("auth.login", ["username": .string("real\(index)x"), "password": "wrong12"])
            #expect(reason(answer) == "wrong_password", "\(answer)")
        }
        #expect(reason(try logIn(sprayer)) == "rate_limited")
        #expect(try unknownNameIsLimited(sprayer))
        #expect(try logIn(try connection(daemon, remote: "198.51.100.8"))["result"]?["token"] != nil)
    }
}
