import Foundation
import Glibc
import RosterCrypto
import RosterProtocol
import RosterSQLite
import Testing

/// `admin.users.*` (protocol.md §Administering users) against the real daemon, on SQLite: a lock ends a live session on
/// its connection at once, a resume with the old token and a log-in answer `locked`, an unlock brings back log-in; a
/// reset lifts a rate limit; the list pages through a thousand accounts; another uid is refused every method
/// (admin.audit too).
@Suite("Administering users against the real daemon", .serialized)
struct AdminUsersTests {
    private static func config(burst: Int = 100_000) -> String {
        "[Hashing]\nMemoryKiB=8192\nIterations=1\n[Login]\nRateLimitBurst=\(burst)\n"
    }

    private static let methods: [(String, String)] = [
        ("admin.users.list", "{}"), ("admin.users.show", #"{"username":"alice1"}"#),
        ("admin.users.lock", #"{"username":"alice1"}"#), ("admin.users.unlock", #"{"username":"alice1"}"#),
        ("admin.users.delete", #"{"username":"alice1"}"#), ("admin.users.reset_failures", #"{"username":"alice1"}"#),
        ("admin.audit", "{}"), ("admin.audit", #"{"follow":true,"username":"alice1"}"#),
    ]

    private func register(_ daemon: TestDaemon, _ username: String, email: String? = nil) throws {
        var params: [(String, JSONValue)] = [("username", .string(username)), ("password", "secret1")]
        if let email { params.append(("email", .string(email))) }
        let answer = try daemon.connect().call("users.register", .object(params))
        #expect(answer["result"]?["username"] == .string(username), "\(answer)")
    }

    private func reason(_ answer: JSONValue) -> String? { answer["error"]?["data"]?["reason"]?.stringValue }

    private func logIn(_ connection: TestClient, _ username: String, _ password: String = "secret1") throws -> JSONValue {
        try connection.call("auth.login", ["username": .string(username), "password": .string(password)])
    }

    @Test func aLockEndsTheLiveSessionAndLogInAndResumeAnswerLockedUntilTheUnlock() throws {
        let daemon = try TestDaemon(config: Self.config())
        try register(daemon, "alice1", email: "alice@example.com")
        let alice = try daemon.connect()
        let token = try #require(try logIn(alice, "alice1")["result"]?["token"]?.stringValue)
        _ = try alice.waitForEvent { $0["type"] == "session" }
        let admin = try daemon.connect()

        #expect(try admin.call("admin.users.lock", ["username": "alice@example.com", "reason": "stolen laptop"])["result"] == [:])
        #expect(try alice.waitForEvent { $0["type"] == "session" }["user"] == .null)
        #expect(try alice.call("session.whoami")["result"]?["user"] == .null)
        let fresh = try daemon.connect()
        let resumed = try fresh.call("session.resume", ["token": .string(token)])
        #expect(reason(resumed) == "locked")
        #expect(resumed["error"]?["code"] == 1014)
        #expect(reason(try logIn(fresh, "alice1")) == "locked")
        #expect(reason(try logIn(fresh, "alice1", "wrong12")) == "wrong_password")
        let shown = try admin.call("admin.users.show", ["username": "alice1"])["result"]?["user"]
        #expect(shown?["locked"] == true)
        #expect(shown?["sessions"] == 0)
        #expect(shown?["last_login_at"]?.stringValue != nil)
        #expect(shown?["locked_reason"] == "stolen laptop")
        #expect(shown?["locked_at"]?.stringValue?.hasSuffix("Z") == true, "\(String(describing: shown))")

        #expect(try admin.call("admin.users.unlock", ["username": "alice1"])["result"] == [:])
        #expect(reason(try fresh.call("session.resume", ["token": .string(token)])) == "not_found")
        #expect(try logIn(fresh, "alice1")["result"]?["token"] != nil)
        let unlocked = try admin.call("admin.users.show", ["username": "alice1"])["result"]?["user"]
        #expect(unlocked?["locked_at"] == .null)
        #expect(unlocked?["locked_reason"] == .null)
    }

    @Test func aResetLetsARateLimitedAccountLogInAgain() throws {
        let daemon = try TestDaemon(config: Self.config(burst: 3))
        try register(daemon, "alice1")
        let client = try daemon.connect()
        for _ in 0..<3 { #expect(reason(try logIn(client, "alice1", "wrong12")) == "wrong_password") }
        #expect(reason(try logIn(client, "alice1")) == "rate_limited")
        let admin = try daemon.connect()
        #expect(try admin.call("admin.users.show", ["username": "alice1"])["result"]?["user"]?["failed_logins"] == 3)
        #expect(try admin.call("admin.users.reset_failures", ["username": "alice1"])["result"] == [:])
        #expect(try logIn(client, "alice1")["result"]?["token"] != nil)
    }

    @Test func theListPagesThroughAThousandAccountsWithAQuery() throws {
        // Seeded in the database before the start: a thousand registrations over the socket cost ~40 s of
        // Argon2id on a shared machine, and what is under test is the list, not registration.
        let directory = try TemporaryDirectory()
        mkdir(directory.path + "/state", 0o700)
        let seeded = try Database(path: directory.path + "/state/roster.db")
        try Migrator.migrate(seeded, migrations: RosterSchema.migrations, now: 1)
        let hash = try PasswordHasher(memoryKiB: 8192, iterations: 1).hash("secret1")
        // In reverse, so that the order of the list is not the order of insertion.
        for number in (0..<1_000).reversed() {
            let name = String(format: "user%04d", number)
            _ = try UserStore(database: seeded).insertUser(canonical: name, display: name,
                                                            email: number.isMultiple(of: 10) ? "\(name)@ten.example" : nil,
                                                            passwordHash: hash, createdAt: 1)
        }
        seeded.close()
        let daemon = try TestDaemon(directory: directory, config: Self.config())
        let admin = try daemon.connect()
        var seen: [String] = []
        var offset = 0
        while true {
            let page = try admin.call("admin.users.list", ["query": "USER0", "limit": 150, "offset": .int(Int64(offset))])
            #expect(page["result"]?["total"] == 1_000)
            let names = page["result"]?["items"]?.arrayValue?.compactMap { $0["username"]?.stringValue } ?? []
            seen += names
            offset += names.count
            if names.count < 150 { break }
        }
        #expect(seen == (0..<1_000).map { String(format: "user%04d", $0) })
        let tens = try admin.call("admin.users.list", ["query": "TEN.example", "limit": 1_000])["result"]
        #expect(tens?["total"] == 100)
        #expect(tens?["items"]?.arrayValue?.first?["email"] == "user0000@ten.example")
        #expect(try admin.call("admin.users.list", ["query": "user09"])["result"]?["total"] == 100)
    }

    @Test func anotherUserIsForbiddenEveryAdminUsersMethod() throws {
        let daemon = try TestDaemon(config: Self.config())
        try register(daemon, "alice1")
        chmod(daemon.directory.path, 0o755)
        chmod(daemon.directory.path + "/run", 0o755)
        chmod(daemon.socketPath, 0o666)
        let request = daemon.directory.path + "/request.json"
        try writeFile(request, Self.methods.enumerated().map { index, method in
            #"{"jsonrpc":"2.0","id":\#(index),"method":"\#(method.0)","params":\#(method.1)}"# + "\n"
        }.joined())
        let result = try capture(["/bin/sh", "-c", "setpriv --reuid=65534 --regid=65534 --clear-groups socat -t 2 - UNIX-CONNECT:\(daemon.socketPath) < \(request)"],
                                 in: daemon.directory)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == Self.methods.count, "\(result)")
        #expect(lines.allSatisfy { $0.contains(#""reason":"forbidden""#) }, "\(result)")
        // Nothing was done: alice still logs in.
        #expect(try logIn(daemon.connect(), "alice1")["result"]?["token"] != nil)
    }
}
