import Foundation
import Glibc
import RosterCrypto
import RosterProtocol
import RosterSQLite
import Testing

/// The life of an account against the real daemon, over the socket, on SQLite (protocol.md §The life of an account).
@Suite("The life of an account against the real daemon", .serialized)
struct AccountLifeTests {
    private static func config(burst: Int = 100_000) -> String {
        "[Hashing]\nMemoryKiB=8192\nIterations=1\n[Login]\nRateLimitBurst=\(burst)\n"
    }

    /// A connection logged in as `username` with `password`, after a hello naming `client`.
    private func loggedIn(_ daemon: TestDaemon, _ username: String, password: String = "secret1",
                          client: String = "test") throws -> TestClient {
        let connection = try daemon.connect()
        _ = try connection.call("session.hello", ["client": .string(client)])
        let answer = try connection.call("auth.login", ["username": .string(username), "password": .string(password)])
        #expect(answer["result"]?["username"] == .string(username), "\(answer)")
        _ = try connection.waitForEvent { $0["type"] == "session" }
        return connection
    }

    private func register(_ daemon: TestDaemon, _ username: String, email: String? = nil,
                          password: String = "secret1") throws {
        var params: [(String, JSONValue)] = [("username", .string(username)), ("password", .string(password))]
        if let email { params.append(("email", .string(email))) }
        let answer = try daemon.connect().call("users.register", .object(params))
        #expect(answer["result"]?["username"] == .string(username), "\(answer)")
    }

    private func reason(_ answer: JSONValue) -> String? { answer["error"]?["data"]?["reason"]?.stringValue }

    private func logInWorks(_ daemon: TestDaemon, _ username: String, _ password: String) throws -> Bool {
        let answer = try daemon.connect().call("auth.login", ["username": .string(username), "password": .string(password)])
        return answer["result"]?["token"] != nil
    }

    /// Waits for this connection's `session` event with `user: null`.
    private func seesLogOut(_ connection: TestClient) throws -> Bool {
        try connection.waitForEvent { $0["type"] == "session" }["user"] == .null
    }

    // MARK: Password, email

    @Test func aPasswordChangeEndsTheOtherSessionsAndKeepsThisOne() throws {
        let daemon = try TestDaemon(config: Self.config())
        try register(daemon, "alice1")
        let mine = try loggedIn(daemon, "alice1")
        let other = try loggedIn(daemon, "alice1")
        let changed = try mine.call("account.change_password", ["current": "secret1", "new": "better22"])
        #expect(changed["result"] == ["revoked": 1])
        #expect(try seesLogOut(other))
        #expect(try mine.call("session.whoami")["result"]?["user"]?["username"] == "alice1")
        #expect(try !logInWorks(daemon, "alice1", "secret1"))
        #expect(try logInWorks(daemon, "alice1", "better22"))
        let same = try mine.call("account.change_password", ["current": "better22", "new": "better22"])
        #expect(reason(same) == "same_as_current")
        #expect(same["error"]?["data"]?["field"] == "new")
    }

    @Test func anEmailChangeThatIsTakenOneThatIsInvalidAndOneThatRemovesIt() throws {
        let daemon = try TestDaemon(config: Self.config())
        try register(daemon, "alice1", email: "alice@example.com")
        try register(daemon, "bob123", email: "bob@example.com")
        let alice = try loggedIn(daemon, "alice1")
        let taken = try alice.call("account.change_email", ["password": "secret1", "email": "Bob@example.com"])
        #expect(reason(taken) == "taken")
        let invalid = try alice.call("account.change_email", ["password": "secret1", "email": "not-an-email"])
        #expect(invalid["error"]?["data"]?["field"] == "email", "\(invalid)")
        #expect(try alice.call("account.show")["result"]?["email"] == "alice@example.com")
        let removed = try alice.call("account.change_email", ["password": "secret1", "email": ""])
        #expect(removed["result"] == ["email": .null])
        #expect(try alice.call("account.show")["result"]?["email"] == .null)
        // The freed address is anyone's now.
        try register(daemon, "carol1", email: "alice@example.com")
    }

    // MARK: Deletion and export

    @Test func aDeletedNameRegistersAgainWithoutItsContactsAndAnOpenFormSawItAvailable() throws {
        let daemon = try TestDaemon(config: Self.config())
        try register(daemon, "alice1")
        let alice = try loggedIn(daemon, "alice1")
        #expect(try alice.call("contacts.add", ["name": "Ada Lovelace"])["result"] != nil)
        let form = try daemon.connect()
        _ = try form.call("session.hello", ["timing": ["debounce_ms": 0]])
        _ = try form.call("form.open", ["form": "register"])
        _ = try form.call("form.input", ["form": "register", "field": "username", "value": "alice1"])
        #expect(try form.waitForEvent { $0["field"] == "username" && $0["code"] == "taken" }["state"] == "invalid")
        #expect(reason(try alice.call("account.delete", ["password": "nope123"])) == "wrong_password")
        #expect(try alice.call("account.delete", ["password": "secret1"])["result"] == [:])
        #expect(try seesLogOut(alice))
        #expect(try form.waitForEvent { $0["field"] == "username" && $0["code"] == "available" }["state"] == "valid")
        try register(daemon, "alice1", password: "another1")
        let again = try loggedIn(daemon, "alice1", password: "another1")
        #expect(try again.call("contacts.list")["result"]?["items"] == [])
    }

    @Test func anExportHoldsNoHashTokenCodeOrSecret() throws {
        let daemon = try TestDaemon(config: Self.config())
        try register(daemon, "alice1", email: "alice@example.com")
        let alice = try daemon.connect()
        let login = try alice.call("auth.login", ["username": "alice1", "password": "secret1"])
        let token = try #require(login["result"]?["token"]?.stringValue)
        _ = try alice.call("contacts.add", ["name": "Ada Lovelace"])
        let codes = try #require(try alice.call("account.recovery_codes", ["password": "secret1"])["result"]?["codes"]?.arrayValue)
        let enrolled = try alice.call("account.totp_enroll", ["password": "secret1"])["result"]
        let secret = try #require(enrolled?["secret"]?.stringValue)
        _ = try alice.call("account.totp_confirm", ["code": .string(try oathtool(secret, at: Int64(time(nil))))])
        try alice.send(#"{"id":77,"method":"account.export"}"# + "\n")
        var line = ""
        while !line.contains(#""id":77"#) { line = try #require(try alice.readRawLine()) }
        let export = try JSONParser.parse(Array(line.utf8))["result"]
        #expect(export?["account"]?["username"] == "alice1")
        #expect(export?["account"]?["totp"] == true)
        #expect(export?["account"]?["recovery_codes_left"] == 10)
        #expect(export?["contacts"]?["data"]?.stringValue?.contains("Ada Lovelace") == true)
        #expect(export?["sessions"]?.arrayValue?.count == 1)
        let stored = try Database(path: daemon.databasePath)
        let hash = try #require(try stored.pragmaValue("SELECT password_hash FROM users WHERE canonical = 'alice1'"))
        let tokenHash = try #require(SessionToken.hash(bearer: token)).map { String(format: "%02x", $0) }.joined()
        let forbidden = [token, tokenHash, secret, secret.lowercased(), hash, "argon2", "secret1"]
            + codes.compactMap(\.stringValue) + codes.compactMap { $0.stringValue?.replacingOccurrences(of: "-", with: "") }
        for text in forbidden { #expect(!line.contains(text), "the export holds \(text.prefix(6))…") }
    }

    // MARK: Sessions

    /// The register and login forms' tokens carry the hello's client too, not only `auth.login`'s.
    @Test func aFormsTokenCarriesTheHellosClient() throws {
        let daemon = try TestDaemon(config: Self.config())
        let registering = try daemon.connect()
        _ = try registering.call("session.hello", ["client": "register-form", "timing": ["debounce_ms": 0]])
        _ = try registering.call("form.open", ["form": "register"])
        for (field, value) in [("username", "formed1"), ("password", "secret1"), ("confirm", "secret1")] {
            _ = try registering.call("form.input", ["form": "register", "field": .string(field), "value": .string(value)])
            _ = try registering.waitForField(field, state: "valid")
        }
        #expect(try registering.call("form.submit", ["form": "register"])["result"]?["username"] == "formed1")
        let logging = try daemon.connect()
        _ = try logging.call("session.hello", ["client": "login-form", "timing": ["debounce_ms": 0]])
        _ = try logging.call("form.open", ["form": "login"])
        for (field, value) in [("username", "formed1"), ("password", "secret1")] {
            _ = try logging.call("form.input", ["form": "login", "field": .string(field), "value": .string(value)])
            _ = try logging.waitForField(field, state: "valid")
        }
        #expect(try logging.call("form.submit", ["form": "login"])["result"]?["username"] == "formed1")
        let items = try #require(try logging.call("session.list")["result"]?["items"]?.arrayValue)
        #expect(Set(items.compactMap { $0["client"]?.stringValue }) == ["register-form", "login-form"])
    }

    @Test func sessionsAreListedRevokedAndRevokedOthersAcrossThreeConnections() throws {
        let daemon = try TestDaemon(config: Self.config())
        try register(daemon, "alice1")
        let first = try loggedIn(daemon, "alice1", client: "first")
        let second = try loggedIn(daemon, "alice1", client: "second")
        let third = try loggedIn(daemon, "alice1", client: "third")
        let items = try #require(try first.call("session.list")["result"]?["items"]?.arrayValue)
        #expect(Set(items.compactMap { $0["client"]?.stringValue }) == ["first", "second", "third"])
        #expect(items.filter { $0["current"] == true }.map { $0["client"] } == ["first"])
        let secondID = try #require(items.first { $0["client"] == "second" }?["id"])
        #expect(try first.call("session.revoke", ["id": secondID])["result"] == [:])
        #expect(try seesLogOut(second))
        #expect(reason(try first.call("session.revoke", ["id": secondID])) == "not_found")
        #expect(try first.call("session.revoke_others")["result"] == ["revoked": 1])
        #expect(try seesLogOut(third))
        #expect(try first.call("session.list")["result"]?["items"]?.arrayValue?.count == 1)
        #expect(try first.call("session.whoami")["result"]?["user"]?["username"] == "alice1")
    }

    // MARK: Recovery

    @Test func aRecoveryCodeWorksOnceAndAUsedOneIsInvalidCodeAndCountsTowardTheLimit() throws {
        let daemon = try TestDaemon(config: Self.config(burst: 3))
        try register(daemon, "alice1")
        let alice = try loggedIn(daemon, "alice1")
        let codes = try #require(try alice.call("account.recovery_codes", ["password": "secret1"])["result"]?["codes"]?.arrayValue)
        #expect(codes.count == 10)
        let code = try #require(codes[0].stringValue)
        let stranger = try daemon.connect()
        let recovered = try stranger.call("auth.recover", ["username": "alice1", "code": .string(code),
                                                           "new_password": "better22"])
        #expect(recovered["result"]?["username"] == "alice1", "\(recovered)")
        #expect(try seesLogOut(alice))
        #expect(try stranger.call("session.whoami")["result"]?["user"]?["username"] == "alice1")
        #expect(try logInWorks(daemon, "alice1", "better22"))
        for _ in 0..<3 {
            let used = try daemon.connect().call("auth.recover", ["username": "alice1", "code": .string(code),
                                                                  "new_password": "other333"])
            #expect(reason(used) == "invalid_code")
        }
        let limited = try daemon.connect().call("auth.recover", ["username": "alice1", "code": .string(codes[1].stringValue ?? ""),
                                                                 "new_password": "other333"])
        #expect(reason(limited) == "rate_limited")
        #expect(try !logInWorks(daemon, "alice1", "other333"))
    }

    // MARK: TOTP

    /// Unix time well inside a 30 s step, so T-1 … T+1 stay what they were while the test runs: the clock is
    /// watched until it is at most 24 s into its step (within 7 s, whenever the test starts).
    private func stepStart() -> Int64 {
        var now = Int64(time(nil))
        #expect(eventually(timeoutMs: 10_000) {
            now = Int64(time(nil))
            return now % 30 <= 24
        })
        return now
    }

    @Test func totpCodesOfTheStepsAroundNowAreAcceptedOnceAndOnlyAfterARightPassword() throws {
        let daemon = try TestDaemon(config: Self.config())
        try register(daemon, "alice1")
        let alice = try loggedIn(daemon, "alice1")
        let enrolled = try #require(try alice.call("account.totp_enroll", ["password": "secret1"])["result"])
        let secret = try #require(enrolled["secret"]?.stringValue)
        #expect(enrolled["uri"]?.stringValue?.hasPrefix("otpauth://totp/Roster:alice1?secret=\(secret)&issuer=Roster") == true)
        #expect(try alice.call("account.show")["result"]?["totp"] == false)
        let now = stepStart()
        #expect(reason(try alice.call("account.totp_confirm", ["code": .string(try oathtool(secret, at: now + 60))]))
            == "invalid_code")
        #expect(try alice.call("account.totp_confirm", ["code": .string(try oathtool(secret, at: now - 30))])["result"] == [:])
        #expect(try alice.call("account.show")["result"]?["totp"] == true)

        let login = { (password: String, code: String?) throws -> JSONValue in
            var params: [(String, JSONValue)] = [("username", "alice1"), ("password", .string(password))]
            if let code { params.append(("code", .string(code))) }
            return try daemon.connect().call("auth.login", .object(params))
        }
        #expect(reason(try login("nope123", nil)) == "wrong_password")
        #expect(reason(try login("secret1", nil)) == "code_required")
        #expect(reason(try login("secret1", try oathtool(secret, at: now - 60))) == "invalid_code")
        #expect(reason(try login("secret1", try oathtool(secret, at: now + 60))) == "invalid_code")
        #expect(try login("secret1", try oathtool(secret, at: now))["result"]?["token"] != nil)
        let next = try oathtool(secret, at: now + 30)
        // As an authenticator app shows it ("123 456"): the same six digits, and a replay is still a replay.
        #expect(try login("secret1", "\(next.prefix(3)) \(next.suffix(3))")["result"]?["token"] != nil)
        #expect(reason(try login("secret1", next)) == "invalid_code")
        #expect(reason(try alice.call("account.totp_disable", ["password": "nope123"])) == "wrong_password")
        #expect(try alice.call("account.totp_disable", ["password": "secret1"])["result"] == [:])
        #expect(try login("secret1", nil)["result"]?["token"] != nil)
    }

    @Test func theLimiterCountsWrongCurrentPasswordsAndWrongCodes() throws {
        let daemon = try TestDaemon(config: Self.config(burst: 3))
        try register(daemon, "alice1")
        try register(daemon, "bob123")
        let alice = try loggedIn(daemon, "alice1")
        for _ in 0..<3 {
            #expect(reason(try alice.call("account.change_password", ["current": "nope123", "new": "better22"])) == "wrong_password")
        }
        #expect(reason(try alice.call("account.change_password", ["current": "secret1", "new": "better22"])) == "rate_limited")
        let bob = try loggedIn(daemon, "bob123")
        let secret = try #require(try bob.call("account.totp_enroll", ["password": "secret1"])["result"]?["secret"]?.stringValue)
        for _ in 0..<3 { #expect(reason(try bob.call("account.totp_confirm", ["code": "000000"])) == "invalid_code") }
        let right = try oathtool(secret, at: Int64(time(nil)))
        #expect(reason(try bob.call("account.totp_confirm", ["code": .string(right)])) == "rate_limited")
    }

    // MARK: Crash

    /// Where in a password change the daemon is killed: each moment is something the test sees happen, never a
    /// length of time, so a loaded machine moves no kill to another phase of the change.
    private enum KillMoment: CaseIterable {
        /// As soon as the request is sent: it may not even have been read.
        case atOnce
        /// Once a thread of the daemon's other than its loop runs (a password is being hashed), or the answer came.
        case whileAWorkerRuns
        /// Once the database's write-ahead log grew (the change is being committed), or the answer came.
        case onceTheLogGrows
        /// Once the answer came: the change was committed before it was sent.
        case afterTheAnswer
    }

    /// Waits for `moment` of the password change sent as id 1 on `connection`. The answer's arrival ends every
    /// wait, so none goes past the change's end.
    private func wait(for moment: KillMoment, _ daemon: TestDaemon, _ connection: TestClient, logBefore: Int) throws {
        switch moment {
        case .atOnce: return
        case .afterTheAnswer:
            var answer: JSONValue
            repeat { answer = try connection.readLine() } while answer["id"] != 1
            #expect(answer["result"] != nil, "\(answer)")
            return
        case .whileAWorkerRuns, .onceTheLogGrows: break
        }
        var entry = pollfd(fd: connection.fd, events: Int16(POLLIN), revents: 0)
        let deadline = monotonicNanoseconds() + 30_000_000_000
        while monotonicNanoseconds() < deadline, Glibc.poll(&entry, 1, 0) == 0 {
            switch moment {
            case .whileAWorkerRuns: if workerRuns(daemon.pid) { return }
            case .onceTheLogGrows: if fileSize(daemon.databasePath + "-wal") > logBefore { return }
            case .atOnce, .afterTheAnswer: return
            }
        }
    }

    /// Whether a thread of `pid` other than its main one (the loop) is running or ready to run.
    private func workerRuns(_ pid: pid_t) -> Bool {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.contains { task in
            guard task != String(pid), let stat = try? readFile("/proc/\(pid)/task/\(task)/stat"),
                  let end = stat.lastIndex(of: ")") else { return false }
            return stat[stat.index(after: end)...].split(separator: " ").first == "R"
        }
    }

    private func fileSize(_ path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : 0
    }

    @Test func killNineDuringAPasswordChangeLeavesExactlyOneOfTheTwoPasswords() throws {
        for moment in KillMoment.allCases {
            let daemon = try TestDaemon(config: Self.config())
            try register(daemon, "alice1")
            let alice = try loggedIn(daemon, "alice1")
            let logBefore = fileSize(daemon.databasePath + "-wal")
            try alice.send(#"{"id":1,"method":"account.change_password","params":{"current":"secret1","new":"better22"}}"# + "\n")
            try wait(for: moment, daemon, alice, logBefore: logBefore)
            daemon.signal(SIGKILL)
            _ = daemon.waitForExit()
            let restarted = try TestDaemon(directory: daemon.directory, config: Self.config())
            let old = try logInWorks(restarted, "alice1", "secret1")
            let new = try logInWorks(restarted, "alice1", "better22")
            #expect(old != new, "after a kill \(moment): old works \(old), new works \(new)")
            if moment == .afterTheAnswer { #expect(new, "an answered password change was lost") }
            restarted.stop()
        }
    }
}

/// The TOTP code of base32 `secret` at Unix time `unix`, by Debian's oathtool: another implementation than the
/// daemon's.
func oathtool(_ secret: String, at unix: Int64) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/oathtool")
    process.arguments = ["--totp", "-b", secret, "-N", "@\(unix)"]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw HarnessError(description: "oathtool exited \(process.terminationStatus) for a code at \(unix)")
    }
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}
