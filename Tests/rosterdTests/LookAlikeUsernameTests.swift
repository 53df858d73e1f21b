import Glibc
import RosterProtocol
import RosterSQLite
import Testing

/// Over the socket: every look-alike of a registered name is refused with a stable code, by
/// `users.check_username` and `users.register` alike, and a stored name the rules now refuse still logs in.
@Suite("Look-alike usernames against the real rosterd", .serialized)
struct LookAlikeUsernameTests {
    static let lookAlikes: [(name: String, code: String)] = [
        ("alice1\u{3164}", "disallowed_character"), ("alice1\u{FE0F}", "disallowed_character"),
        ("𝐚𝐥𝐢𝐜𝐞𝟏", "disallowed_character"), ("ﬁlice1", "disallowed_character"), ("alⅰce1", "disallowed_character"),
        ("alice¹", "disallowed_character"), ("alice😀", "disallowed_character"), ("😀😀😀😀😀😀", "disallowed_character"),
        ("\u{430}lice1", "mixed_script"), ("al\u{3B9}ce1", "mixed_script"), ("123مرحبا", "bidi_rule"),
        ("abcdef" + String(repeating: "\u{301}", count: 12_000), "too_long"),
    ]

    @Test func everyLookAlikeOfARegisteredNameIsRefused() throws {
        let daemon = try TestDaemon()
        let client = try daemon.connect()
        _ = try client.call("session.hello", ["locale": "en"])
        #expect(try client.call("users.register", ["username": "alice1", "password": "secret1"])["result"]
                == ["username": "alice1"])
        for (name, code) in Self.lookAlikes {
            let check = try client.call("users.check_username", ["username": .string(name)])["result"]
            #expect(check?["state"] == "invalid", "\(name.prefix(12))")
            #expect(check?["code"] == .string(code), "\(name.prefix(12))")
            let register = try client.call("users.register", ["username": .string(name), "password": "secret1"])
            #expect(register["error"]?["code"] == 1005, "\(name.prefix(12))")
            #expect(register["error"]?["data"] == ["reason": .string(code), "field": "username"], "\(name.prefix(12))")
            #expect(register["error"]?["message"] == check?["message"])
        }
        let messages = try ["alice1\u{3164}", "\u{430}lice1", "123مرحبا"].map { name in
            try client.call("users.check_username", ["username": .string(name)])["result"]?["message"]
        }
        #expect(messages == [
            "The username contains a character that usernames cannot hold (such as an emoji, an invisible character or a styled letter)",
            "The username must not mix writing systems (such as Latin and Cyrillic letters)",
            "The username mixes right-to-left text with other characters in a way that is not allowed",
        ])
        // Names in one script, or Latin with a CJK writing system, are still welcome.
        for name in ["алиса1", "tanaka太郎", "김수현님안녕", "مرحبا123", "josé12"] {
            #expect(try client.call("users.register", ["username": .string(name), "password": "secret1"])["result"]
                    != nil, "\(name)")
        }
        // Nothing refused was logged, so no log line carries the 24 KB name.
        #expect(daemon.stderr.split(separator: "\n").allSatisfy { $0.utf8.count < 1_024 })
    }

    @Test func theRegisterFormGivesTheSameCodes() throws {
        let daemon = try TestDaemon()
        let client = try daemon.connect()
        _ = try client.call("session.hello", ["locale": "en", "timing": ["debounce_ms": 0]])
        _ = try client.call("form.open", ["form": "register"])
        for (name, code) in Self.lookAlikes {
            _ = try client.call("form.input", ["form": "register", "field": "username", "value": .string(name)])
            #expect(try client.waitForField("username", state: "invalid")["code"] == .string(code), "\(name.prefix(12))")
        }
    }

    @Test func aStoredNameTheRulesNowRefuseStillLogsInAndStaysTaken() throws {
        let first = try TestDaemon()
        _ = try first.connect().call("users.register", ["username": "alice1", "password": "secret1"])
        first.signal(SIGTERM)
        #expect(first.waitForExit() == 0)
        // What an older rosterd let through: a look-alike account beside alice1.
        let database = try Database(path: first.databasePath)
        try database.execute("""
            INSERT INTO users(canonical, display, email, password_hash, created_at)
            SELECT 'alice1\u{3164}', 'alice1\u{3164}', NULL, password_hash, created_at FROM users WHERE canonical = 'alice1'
            """)
        database.close()

        let daemon = try TestDaemon(directory: first.directory)
        let client = try daemon.connect()
        let login = try client.call("auth.login", ["username": "alice1\u{3164}", "password": "secret1"])
        #expect(login["result"]?["username"] == "alice1\u{3164}")
        #expect(try client.call("session.whoami")["result"]?["user"]?["username"] == "alice1\u{3164}")
        guard let token = login["result"]?["token"] else {
            Issue.record("no token: \(login)")
            return
        }
        #expect(try daemon.connect().call("session.resume", ["token": token])["result"]?["username"] == "alice1\u{3164}")
        // The rules answer first; the name is not free either way, and nobody can register it again.
        #expect(try client.call("users.check_username", ["username": "alice1\u{3164}"])["result"]?["code"]
                == "disallowed_character")
        #expect(try client.call("users.register", ["username": "alice1\u{3164}", "password": "secret1"])["error"]?["data"]?["reason"]
                == "disallowed_character")
        #expect(try client.call("users.check_username", ["username": "alice1"])["result"]?["code"] == "taken")
    }
}
