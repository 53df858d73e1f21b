import Glibc
import RosterProtocol
import RosterSQLite
import Testing

/// Free text a peer stores (`session.hello` `client`, `admin.users.lock` `reason`) is bounded and holds no control
/// or bidi character, and one account's live tokens are capped, against the real daemon: a local user can neither
/// fill the disk through log-ins nor forge a row of what rosterctl prints.
@Suite("Free text and the session cap against rosterd", .serialized)
struct FreeTextAndSessionCapTests {
    private static let config = "[Hashing]\nMemoryKiB=8192\nIterations=1\n[Login]\nRateLimitBurst=100000\n"

    private func reason(_ answer: JSONValue) -> String? { answer["error"]?["data"]?["reason"]?.stringValue }

    /// Registers `username`, then logs in once on a connection that named no client; that log-in's token.
    @discardableResult
    private func register(_ daemon: TestDaemon, _ username: String) throws -> String {
        let registered = try daemon.connect().call("users.register", ["username": .string(username), "password": "secret1"])
        #expect(registered["result"]?["username"] == .string(username), "\(registered)")
        let answer = try daemon.connect().call("auth.login", ["username": .string(username), "password": "secret1"])
        return try #require(answer["result"]?["token"]?.stringValue, "\(answer)")
    }

    @Test func helloRefusesALongOrControlClientWithAStableReasonAndAppliesNothingOfIt() throws {
        let daemon = try TestDaemon(config: Self.config)
        try register(daemon, "alice1")
        let client = try daemon.connect()
        #expect(try client.call("session.hello", ["client": "first-name"])["result"] != nil)
        let refused: [(String, String)] = [
            (String(repeating: "x", count: 129), "too_long"),
            (String(repeating: "x", count: 65_000), "too_long"),
            // One character on screen, 129 Unicode scalars.
            ("e" + String(repeating: "\u{301}", count: 128), "too_long"),
            ("rosterctl\n2026-12-01T19:00:00Z login root succeeded", "control_character"),
            ("web\u{1B}[8m hidden", "control_character"),
            ("web\u{202E}evil", "control_character"),
            ("a\u{85}b", "control_character"), ("a\u{7F}", "control_character"), ("a\u{2066}b", "control_character"),
            ("a\u{200F}", "control_character"), ("tab\there", "control_character"),
        ]
        for (text, expected) in refused {
            let answer = try client.call("session.hello", ["locale": "en", "client": .string(text)])
            #expect(reason(answer) == expected, "\(text.prefix(40).debugDescription): \(answer)")
            #expect(answer["error"]?["code"] == -32602)
            #expect(answer["error"]?["data"]?["param"] == "client")
            // The locale of the refused hello was not applied: the message is still zh-Hans.
            #expect(answer["error"]?["message"]?.stringValue?.contains("参数 client") == true, "\(answer)")
        }
        // At the cap, in any script, it is taken.
        #expect(try client.call("session.hello", ["client": .string(String(repeating: "张", count: 128))])["result"] != nil)
        #expect(try client.call("session.hello", ["client": "rosterctl 1.4"])["result"] != nil)
        #expect(try client.call("auth.login", ["username": "alice1", "password": "secret1"])["result"]?["token"] != nil)
        let listed = try client.call("session.list")["result"]?["items"]?.arrayValue ?? []
        #expect(listed.compactMap { $0["client"]?.stringValue } == ["rosterctl 1.4"], "\(listed)")
    }

    @Test func aLockReasonIsBoundedInUnicodeScalarsAndHoldsNoControlCharacter() throws {
        let daemon = try TestDaemon(config: Self.config)
        try register(daemon, "alice1")
        let admin = try daemon.connect()
        _ = try admin.call("session.hello", ["locale": "en"])
        let refused: [(String, String)] = [
            ("stolen\n2026-12-01T19:00:00Z unlocked root succeeded", "control_character"),
            ("\u{1B}[8mhidden", "control_character"), ("laptop \u{202E}nelots", "control_character"),
            (String(repeating: "x", count: 201), "too_long"),
            // 101 characters on screen but 202 scalars: more than the schema's CHECK holds.
            (String(repeating: "e\u{301}", count: 101), "too_long"),
        ]
        for (text, expected) in refused {
            let answer = try admin.call("admin.users.lock", ["username": "alice1", "reason": .string(text)])
            #expect(reason(answer) == expected, "\(text.prefix(40).debugDescription): \(answer)")
            #expect(answer["error"]?["data"]?["param"] == "reason")
            #expect(try admin.call("admin.users.show", ["username": "alice1"])["result"]?["user"]?["locked"] == false)
        }
        let longest = String(repeating: "e\u{301}", count: 100)
        #expect(try admin.call("admin.users.lock", ["username": "alice1", "reason": .string(longest)])["result"] == [:])
        #expect(try admin.call("admin.users.show", ["username": "alice1"])["result"]?["user"]?["locked_reason"]
                == .string(longest))
    }

    /// 202 tokens for one account (202 log-ins): the two least recently used go, not the two oldest — the first
    /// log-in's token was resumed midway — each revoked as a revocation is, and the
    /// account's answers stay small.
    @Test func logInsPastTheCapRevokeTheLeastRecentlyUsedTokensAndTheAccountStillAnswers() throws {
        let daemon = try TestDaemon(config: Self.config)
        let registered = try register(daemon, "alice1")
        func name(_ number: Int) -> String { "c" + String(String(1_000 + number).dropFirst()) }
        func logIn(_ connection: TestClient, as client: String) throws {
            #expect(try connection.call("session.hello", ["client": .string(client)])["result"] != nil)
            let answer = try connection.call("auth.login", ["username": "alice1", "password": "secret1"])
            #expect(answer["result"]?["token"] != nil, "\(answer)")
        }
        let watcher = try daemon.connect()
        try logIn(watcher, as: "c000")
        let storm = try daemon.connect()
        for number in 1...100 { try logIn(storm, as: name(number)) }
        let resumer = try daemon.connect()
        #expect(try resumer.call("session.resume", ["token": .string(registered)])["result"] != nil)
        for number in 101...200 { try logIn(storm, as: name(number)) }

        let items = try #require(try storm.call("session.list")["result"]?["items"]?.arrayValue)
        #expect(storm.takeEvents().filter(loggedOut).isEmpty, "the connection logging in kept its session")
        #expect(items.count == 200)
        let clients = items.map { $0["client"]?.stringValue ?? "-" }
        let kept: Set<String> = Set((2...200).map(name)).union(["-"])
        #expect(Set(clients) == kept, "c000 and c001 went")
        #expect(items.filter { $0["current"] == true }.map { $0["client"]?.stringValue } == ["c200"])
        #expect(try resumer.call("session.whoami")["result"]?["user"]?["username"] == "alice1")
        _ = try watcher.waitForEvent(loggedOut)
        let export = try storm.call("account.export")
        #expect(export["result"] != nil, "\(export["error"] ?? .null)")

        let admin = try daemon.connect()
        let revoked = try admin.call("admin.audit", ["event": "session_revoked", "limit": 10])["result"]?["items"]?.arrayValue ?? []
        #expect(revoked.count == 2, "\(revoked)")
        #expect(revoked.allSatisfy { $0["reason"] == "session_limit" && $0["username"] == "alice1" && $0["outcome"] == "succeeded" })
        #expect(revoked.map { $0["client"]?.stringValue } == ["c200", "c199"])
    }

    /// Rows stored before these refusals (by an older rosterd) print escaped in every table: a newline shows as
    /// `\n`, ESC as `\u{1b}`, a bidi override as `\u{202e}`, and no row is forged.
    @Test func rowsStoredByAnOlderVersionPrintEscapedInEveryTable() throws {
        let daemon = try TestDaemon(config: Self.config)
        let ctl = try Rosterctl(daemon)
        try ctl.registerAndLogIn("alice12")
        let forged = "ok\\n2026-12-01T19:00:00Z login root succeeded\\u{1b}[8mhidden\\u{202e}txt"
        let sqlText = "'ok' || char(10) || '2026-12-01T19:00:00Z login root succeeded' || char(27) || '[8mhidden' || char(8238) || 'txt'"
        func expectEscaped(_ arguments: [String]) throws {
            let run = try ctl.run(arguments)
            #expect(run.status == 0, "\(arguments): \(run.stderr)")
            #expect(!Array(run.stdout.utf8).contains(0x1B), "\(arguments): an ESC reached the terminal")
            #expect(!run.stdout.unicodeScalars.contains("\u{202E}"), "\(arguments)")
            #expect(!run.stdout.contains("\n2026-12-01T19:00:00Z login root"), "\(arguments): a forged row\n\(run.stdout)")
            #expect(run.stdout.contains(forged), "\(arguments)\n\(run.stdout)")
        }
        let database = try Database(path: daemon.databasePath)
        try database.execute("UPDATE session_tokens SET client = \(sqlText)")
        try database.execute("""
            INSERT INTO audit_log(time_ms, event, username, peer_uid, peer_pid, client, outcome, reason, suppressed)
            VALUES (1, 'locked', 'alice12', 0, 1, \(sqlText), 'succeeded', \(sqlText), 0)
            """)
        try expectEscaped(["sessions"])
        try expectEscaped(["audit", "--user", "alice12"])
        try expectEscaped(["--no-legend", "audit", "--user", "alice12"])
        // Last: a locked account's session no longer resumes.
        try database.execute("UPDATE users SET locked_at = 1, locked_reason = \(sqlText) WHERE canonical = 'alice12'")
        database.close()
        try expectEscaped(["user", "show", "alice12"])
    }
}
