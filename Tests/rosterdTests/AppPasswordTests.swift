import Foundation
import Glibc
import RosterProtocol
import Testing

/// App passwords and `auth.dav_login` against the real daemon (protocol.md "App passwords"): a secret shown once and
/// listed without it, a contacts-only session whose token keeps its scope, `auth.login` refusing app passwords, an
/// account with TOTP needing one, failures in the limiter `auth.login` uses, the audit's method and client, the cap,
/// and the account's deletion taking them.
@Suite("App passwords against rosterd", .serialized)
struct AppPasswordTests {
    private static let config = "[Hashing]\nMemoryKiB=8192\nIterations=1\n[Login]\nRateLimitBurst=5\n"

    private func reason(_ answer: JSONValue) -> String? { answer["error"]?["data"]?["reason"]?.stringValue }

    /// Registers `username` and answers a connection logged in as it.
    private func owner(_ daemon: TestDaemon, _ username: String = "alice1") throws -> TestClient {
        let connection = try daemon.connect()
        _ = try connection.call("session.hello", ["client": "rosterctl"])
        #expect(try connection.call("users.register", ["username": .string(username), "password": "secret1"])["result"] != nil)
        #expect(try connection.call("auth.login", ["username": .string(username), "password": "secret1"])["result"] != nil)
        return connection
    }

    private func create(_ connection: TestClient, _ name: String) throws -> (id: String, password: String) {
        let made = try connection.call("account.app_password_create", ["name": .string(name)])
        return (try #require(made["result"]?["id"]?.stringValue, "\(made)"),
                try #require(made["result"]?["password"]?.stringValue))
    }

    @Test func aDavLogInOpensOnlyTheContactsAndItsTokenKeepsThatScope() throws {
        let daemon = try TestDaemon(config: Self.config)
        let alice = try owner(daemon)
        let made = try create(alice, "Thunderbird")
        #expect(made.password.count == 24 && made.password.allSatisfy { $0.isLowercase || ("2"..."7").contains($0) })
        let listed = try #require(try alice.call("account.app_password_list")["result"]?["items"]?.arrayValue)
        #expect(listed.map { $0["id"]?.stringValue } == [made.id] && listed.first?["name"] == "Thunderbird")
        #expect(listed.first?["last_used_at"] == .null && listed.first?["password"] == nil)

        let dav = try daemon.connect()
        _ = try dav.call("session.hello", ["client": "DAVx5/4.4.2"])
        #expect(reason(try dav.call("auth.login", ["username": "alice1", "password": .string(made.password)]))
                == "wrong_password", "auth.login never takes an app password")
        let login = try dav.call("auth.dav_login", ["username": "ALICE1", "password": .string(made.password)])
        let token = try #require(login["result"]?["token"]?.stringValue, "\(login)")
        #expect(login["result"]?["username"] == "alice1" && token.hasPrefix("dav."))
        #expect(try dav.call("contacts.add", ["name": "Ada Lovelace"])["result"] != nil)
        #expect(try dav.call("contacts.list")["result"]?["total"] == 1)
        for method in ["account.show", "account.app_password_create", "session.list", "auth.dav_login", "admin.stats"] {
            #expect(reason(try dav.call(method, ["name": "x", "username": "alice1", "password": "secret1"]))
                    == "forbidden", "\(method)")
        }
        // Resumed elsewhere, the token is as narrow; without its prefix it is no token at all.
        let again = try daemon.connect()
        #expect(try again.call("session.resume", ["token": .string(token)])["result"]?["username"] == "alice1")
        #expect(reason(try again.call("account.show")) == "forbidden")
        #expect(try again.call("contacts.list")["result"]?["total"] == 1)
        #expect(reason(try daemon.connect().call("session.resume", ["token": .string(String(token.dropFirst(4)))]))
                == "not_found")
        // Logged out, the connection may log in in full again.
        #expect(try again.call("session.logout")["result"] != nil)
        #expect(try again.call("auth.login", ["username": "alice1", "password": "secret1"])["result"] != nil)
        #expect(try again.call("account.show")["result"] != nil)

        let used = try #require(try alice.call("account.app_password_list")["result"]?["items"]?.arrayValue)
        #expect(used.first?["last_used_at"]?.stringValue != nil)
        let export = try #require(try alice.call("account.export")["result"])
        #expect(export["app_passwords"]?.arrayValue?.map { $0["id"]?.stringValue } == [made.id])
        #expect(!"\(export)".contains(made.password))

        let log = try #require(try alice.call("admin.audit", ["limit": 50])["result"]?["items"]?.arrayValue)
        let davLogin = log.first { $0["method"] == "app_password" && $0["outcome"] == "succeeded" }
        #expect(davLogin?["event"] == "login" && davLogin?["client"] == "DAVx5/4.4.2" && davLogin?["username"] == "alice1")
        #expect(log.contains { $0["event"] == "app_password_added" && $0["client"] == "rosterctl" })

        #expect(try alice.call("account.app_password_remove", ["id": .string(made.id)])["result"] != nil)
        #expect(reason(try alice.call("account.app_password_remove", ["id": .string(made.id)])) == "not_found")
        #expect(reason(try daemon.connect().call("auth.dav_login", ["username": "alice1", "password": .string(made.password)]))
                == "wrong_password")
        let removed = try #require(try alice.call("admin.audit", ["event": "app_password_removed"])["result"]?["items"]?.arrayValue)
        #expect(removed.count == 1)
    }

    @Test func anAccountWithTOTPNeedsAnAppPasswordAndFailuresShareTheLimiter() throws {
        let daemon = try TestDaemon(config: Self.config)
        let alice = try owner(daemon)
        let made = try create(alice, "phone")
        // Without TOTP, the account's own password opens the contacts too.
        #expect(try daemon.connect().call("auth.dav_login", ["username": "alice1", "password": "secret1"])["result"] != nil)
        let enrolled = try alice.call("account.totp_enroll", ["password": "secret1"])["result"]
        let secret = try #require(enrolled?["secret"]?.stringValue)
        _ = try alice.call("account.totp_confirm", ["code": .string(try oathtool(secret, at: Int64(time(nil))))])
        #expect(reason(try daemon.connect().call("auth.dav_login", ["username": "alice1", "password": "secret1"]))
                == "invalid_credentials")
        #expect(try daemon.connect().call("auth.dav_login", ["username": "alice1", "password": .string(made.password)])["result"]
                != nil)
        let refused = try #require(try alice.call("admin.audit", ["event": "login"])["result"]?["items"]?.arrayValue)
        #expect(refused.contains { $0["reason"] == "app_password_required" && $0["outcome"] == "failed" })
        // Four more failures (one counted already) reach the burst of 5: then even the app password waits, and
        // auth.login with the right password too.
        for _ in 0..<4 {
            _ = try daemon.connect().call("auth.dav_login", ["username": "alice1", "password": "wrong-one"])
        }
        #expect(reason(try daemon.connect().call("auth.dav_login", ["username": "alice1", "password": .string(made.password)]))
                == "rate_limited")
        #expect(reason(try daemon.connect().call("auth.login", ["username": "alice1", "password": "secret1"]))
                == "rate_limited")
    }

    @Test func anAccountHoldsTwentyAndTheirDeletionGoesWithIt() throws {
        let daemon = try TestDaemon(config: Self.config)
        let alice = try owner(daemon)
        var last = ""
        for number in 1...20 { last = try create(alice, "client \(number)").password }
        let over = try alice.call("account.app_password_create", ["name": "one more"])
        #expect(reason(over) == "too_many_app_passwords" && over["error"]?["data"]?["param"] == "name")
        #expect(reason(try alice.call("account.app_password_create", ["name": "   "])) == "out_of_range")
        #expect(reason(try alice.call("account.app_password_create", ["name": "a\u{1B}b"])) == "control_character")
        #expect(reason(try daemon.connect().call("account.app_password_list")) == "unauthenticated")
        #expect(try alice.call("account.delete", ["password": "secret1"])["result"] != nil)
        _ = try owner(daemon)
        #expect(try daemon.connect().call("auth.dav_login", ["username": "alice1", "password": .string(last)])["error"] != nil)
    }
}
