import Glibc
import RosterProtocol
import Testing

/// Account times are RFC 3339 strings of the clock; golden outputs read them as "T".
func untimed(_ text: String) -> String {
    var result = ""
    var rest = Substring(text)
    // Compact (`"created_at":"…"`) and pretty-printed (`"created_at": "…"`) alike: two exports a second apart
    // must compare equal.
    while let key = rest.firstRange(of: "_at\":") {
        result += rest[..<key.upperBound]
        rest = rest[key.upperBound...]
        let spaces = rest.prefix { $0 == " " }
        result += spaces
        rest = rest.dropFirst(spaces.count)
        guard rest.first == "\"" else { continue }
        result += "\"T"
        rest = rest.dropFirst().drop { $0 != "\"" }
    }
    return result + rest
}

/// A TOTP code for `secret` at now + `offsetSteps` × 30 s, by oathtool: an implementation other than the
/// daemon's liboath call.
func oathCode(_ secret: String, offsetSteps: Int = 0) throws -> String {
    try oathtool(secret, at: Int64(time(nil)) + 30 * Int64(offsetSteps))
}

/// A `session` event saying the connection is logged out (its own log-in's event comes first); waiting for one
/// throws when none comes within the client's timeout.
func loggedOut(_ event: JSONValue) -> Bool { event["type"] == "session" && event["user"] == .null }

/// `rosterctl account`, `sessions` and `recover` against the real daemon: golden `--json`, exit codes, and what
/// the other connections of the user see.
@Suite("rosterctl account commands against rosterd", .serialized)
struct RosterctlAccountTests {
    private func loggedInClient(_ ctl: Rosterctl, _ username: String, password: String = "secret1", client: String) throws -> TestClient {
        let other = try ctl.daemon.connect()
        _ = try other.call("session.hello", ["locale": "en", "client": .string(client)])
        let login = try other.call("auth.login", ["username": .string(username), "password": .string(password)])
        guard login["result"]?["token"] != nil else { throw HarnessError(description: "log-in failed: \(login)") }
        return other
    }

    @Test func withoutASessionTheAccountCommandsSayHowToLogIn() throws {
        let ctl = try Rosterctl(TestDaemon())
        for verb in [["account", "show"], ["account", "export"], ["sessions"], ["sessions", "revoke-others"]] {
            let result = try ctl.run(verb)
            #expect(result.status == 1, "\(verb)")
            #expect(result.stderr == "rosterctl: not logged in; run rosterctl login\n", "\(verb)")
        }
        // Scripts must say where secrets come from, and that they mean a deletion, before anything is sent.
        #expect(try ctl.run(["account", "delete"], environment: ["ROSTER_PASSWORD=secret1"]).status == 2)
        #expect(try ctl.run(["account", "password"], environment: ["ROSTER_PASSWORD=secret1"]).status == 2)
        #expect(try ctl.run(["account", "email", "a@example.com"]).status == 2)
        #expect(try ctl.run(["recover", "--username", "alice12"], environment: ["ROSTER_RECOVERY_CODE=x"]).status == 2)
        #expect(try ctl.run(["account", "totp", "confirm"]).status == 2)
    }

    @Test func accountShowIsGoldenAndTheEmailChanges() throws {
        let ctl = try Rosterctl(TestDaemon())
        let registered = try ctl.run(["register", "--username", "alice12", "--email", "a@example.com", "--password-stdin"],
                                     input: "secret1\n")
        #expect(registered.status == 0)
        let show = try ctl.run(["--json", "account", "show"])
        #expect(show.status == 0)
        #expect(untimed(show.stdout)
            == "{\"username\":\"alice12\",\"email\":\"a@example.com\",\"email_verified\":false,\"created_at\":\"T\",\"totp\":false,\"recovery_codes_left\":0}\n")
        let table = try ctl.run(["account", "show"])
        #expect(table.stdout.contains("           Username: alice12\n              Email: a@example.com\n"))
        let changed = try ctl.run(["--json", "account", "email", "b@example.com"], environment: ["ROSTER_PASSWORD=secret1"])
        #expect(changed.status == 0)
        #expect(changed.stdout == "{\"email\":\"b@example.com\"}\n")
        let wrong = try ctl.run(["--locale", "en", "account", "email", "c@example.com", "--password-stdin"], input: "nope999\n")
        #expect(wrong.status == 1)
        #expect(wrong.stderr == "rosterctl: account email: Wrong password (wrong_password)\n")
        let invalid = try ctl.run(["account", "email", "not-an-email"], environment: ["ROSTER_PASSWORD=secret1"])
        #expect(invalid.status == 1)
        #expect(invalid.stderr.hasPrefix("rosterctl: account email: "))
        let removed = try ctl.run(["account", "email", ""], environment: ["ROSTER_PASSWORD=secret1"])
        #expect(removed.status == 0)
        #expect(removed.stdout == "email removed\n")
        #expect(try ctl.run(["account", "show"]).stdout.contains("              Email: -\n"))
    }

    @Test func aPasswordChangeLogsOutTheOtherSessionsAndKeepsThisOne() throws {
        let ctl = try Rosterctl(TestDaemon())
        try ctl.registerAndLogIn("alice12")
        let other = try loggedInClient(ctl, "alice12", client: "other")
        let changed = try ctl.run(["--json", "account", "password"],
                                  environment: ["ROSTER_PASSWORD=secret1", "ROSTER_NEW_PASSWORD=secret2"])
        #expect(changed.status == 0)
        #expect(changed.stdout == "{\"revoked\":1}\n")
        _ = try other.waitForEvent(loggedOut)
        #expect(try ctl.run(["whoami"]).stdout == "alice12\n")
        #expect(try ctl.run(["login", "--username", "alice12"], environment: ["ROSTER_PASSWORD=secret1"]).status == 1)
        // From stdin: the current password, then the new one; the message for people counts the others.
        let again = try ctl.run(["account", "password", "--password-stdin"], input: "secret2\nsecret3\n")
        #expect(again.status == 0)
        #expect(again.stdout == "password changed; 0 other sessions were logged out\n")
        #expect(try ctl.run(["login", "--username", "alice12"], environment: ["ROSTER_PASSWORD=secret3"]).status == 0)
    }

    @Test func sessionsAreListedAndRevokedAcrossThreeConnections() throws {
        let ctl = try Rosterctl(TestDaemon())
        try ctl.registerAndLogIn("alice12")
        let second = try loggedInClient(ctl, "alice12", client: "second")
        let third = try loggedInClient(ctl, "alice12", client: "third")
        let listed = try ctl.run(["--json", "sessions"])
        #expect(listed.status == 0)
        let items = try JSONParser.parse(Array(listed.stdout.utf8))["items"]?.arrayValue ?? []
        #expect(items.count == 3)
        #expect(items.filter { $0["current"] == true }.count == 1)
        #expect(items.first { $0["current"] == true }?["client"] == "rosterctl")
        let secondID = try #require(items.first { $0["client"] == "second" }?["id"]?.stringValue)
        #expect(secondID.count == 16)
        let table = try ctl.run(["--no-legend", "sessions"]).stdout.split(separator: "\n")
        #expect(table.count == 3)
        #expect(table.contains { line in
            let cells = line.split(separator: " ").map(String.init)
            return cells.first == secondID && cells.suffix(2) == ["second", "no"]
        })
        let revoked = try ctl.run(["--json", "sessions", "revoke", secondID])
        #expect(revoked.stdout == "{\"revoked\":\"\(secondID)\",\"current\":false}\n")
        _ = try second.waitForEvent(loggedOut)
        let others = try ctl.run(["--json", "sessions", "revoke-others"])
        #expect(others.stdout == "{\"revoked\":1}\n")
        _ = try third.waitForEvent(loggedOut)
        #expect(try ctl.run(["--no-legend", "sessions"]).stdout.split(separator: "\n").count == 1)
        let unknown = try ctl.run(["sessions", "revoke", "0000000000000000"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("(not_found)"))
        // Revoking this very session logs this user out here too.
        let currentID = try #require(items.first { $0["current"] == true }?["id"]?.stringValue)
        #expect(try ctl.run(["sessions", "revoke", currentID]).stdout == "revoked session \(currentID) (this one: logged out)\n")
        #expect(fileMode(ctl.sessionPath) == nil)
    }

    /// `rosterctl app-password`: a new one printed once and opening a DAV log-in, listed without it, removed.
    @Test func anAppPasswordIsPrintedOnceListedWithoutItAndRemoved() throws {
        let ctl = try Rosterctl(TestDaemon())
        try ctl.registerAndLogIn("alice12")
        let made = try ctl.run(["app-password", "create", "DAVx5 phone"])
        #expect(made.status == 0, "\(made.stderr)")
        let lines = made.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3 && lines[0].hasPrefix("app password ") && lines[0].hasSuffix(" \"DAVx5 phone\":"))
        let secret = try #require(lines.dropFirst().first)
        #expect(secret.utf8.count == 24)
        let dav = try ctl.daemon.connect()
        #expect(try dav.call("auth.dav_login", ["username": "alice12", "password": .string(secret)])["result"] != nil)
        let listed = try ctl.run(["--json", "app-password", "list"])
        let items = try JSONParser.parse(Array(listed.stdout.utf8))["items"]?.arrayValue ?? []
        let id = try #require(items.first?["id"]?.stringValue)
        #expect(items.count == 1 && items.first?["name"] == "DAVx5 phone" && !listed.stdout.contains(secret))
        let table = try ctl.run(["--no-legend", "app-password"]).stdout
        #expect(table.hasPrefix(id + " ") && table.contains("DAVx5 phone") && !table.contains(secret))
        #expect(try ctl.run(["--json", "app-password", "rm", id]).stdout == "{\"removed\":\"\(id)\"}\n")
        let again = try ctl.run(["app-password", "rm", id])
        #expect(again.status == 1 && again.stderr.contains("(not_found)"))
        #expect(try ctl.run(["app-password", "rm", "NOT-AN-ID"]).status == 2)
        #expect(try ctl.run(["app-password", "create"]).status == 2)
        #expect(try ctl.run(["app-password", "frobnicate"]).status == 2)
    }

    @Test func aRecoveryCodeSetsANewPasswordOnce() throws {
        let ctl = try Rosterctl(TestDaemon())
        try ctl.registerAndLogIn("alice12")
        let made = try ctl.run(["--json", "account", "recovery-codes", "--password-stdin"], input: "secret1\n")
        #expect(made.status == 0)
        let codes = try JSONParser.parse(Array(made.stdout.utf8))["codes"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(codes.count == 10)
        #expect(try ctl.run(["account", "show"]).stdout.contains("Recovery codes left: 10\n"))
        let plain = try ctl.run(["account", "recovery-codes"], environment: ["ROSTER_PASSWORD=secret1"])
        let fresh = plain.stdout.split(separator: "\n").map(String.init)
        #expect(fresh.count == 10)
        #expect(Set(fresh).isDisjoint(with: codes))
        #expect(plain.stderr.contains("not shown again"))
        #expect(try ctl.run(["logout"]).status == 0)
        let recovered = try ctl.run(["--json", "recover", "--username", "alice12", "--password-stdin"], input: fresh[0] + "\nsecret9\n")
        #expect(recovered.status == 0)
        #expect(recovered.stdout == "{\"username\":\"alice12\"}\n")
        #expect(try ctl.run(["whoami"]).stdout == "alice12\n")
        #expect(try ctl.run(["login", "--username", "alice12"], environment: ["ROSTER_PASSWORD=secret9"]).status == 0)
        let used = try ctl.run(["recover", "--username", "alice12"],
                               environment: ["ROSTER_RECOVERY_CODE=\(fresh[0])", "ROSTER_NEW_PASSWORD=secret8"])
        #expect(used.status == 1)
        #expect(used.stderr.contains("(invalid_code)"))
        // An older batch's code died when the new batch was made.
        let old = try ctl.run(["recover", "--username", "alice12"],
                              environment: ["ROSTER_RECOVERY_CODE=\(codes[0])", "ROSTER_NEW_PASSWORD=secret8"])
        #expect(old.stderr.contains("(invalid_code)"))
    }

    @Test func totpEnrolsConfirmsAndThenLogInAsksForTheCode() throws {
        let ctl = try Rosterctl(TestDaemon())
        try ctl.registerAndLogIn("alice12")
        // No line after the password: enrolment stays pending, and the answer is printed whole.
        let enrolled = try ctl.run(["--json", "account", "totp", "enroll", "--password-stdin"], input: "secret1\n")
        #expect(enrolled.status == 0)
        #expect(enrolled.stderr.contains("rosterctl account totp confirm"))
        let answer = try JSONParser.parse(Array(enrolled.stdout.utf8))
        let secret = try #require(answer["secret"]?.stringValue)
        #expect(answer["uri"]?.stringValue?.hasPrefix("otpauth://totp/Roster:alice12?secret=\(secret)") == true)
        #expect(untimed(enrolled.stdout) == "{\"secret\":\"\(secret)\",\"uri\":\"\(answer["uri"]?.stringValue ?? "")\"}\n")
        // Not a terminal: no QR code on a pipe, only the URI and the secret.
        let text = try ctl.run(["account", "totp", "enroll"], environment: ["ROSTER_PASSWORD=secret1"])
        #expect(!text.stdout.contains("█"))
        let lines = text.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(lines[0].hasPrefix("otpauth://totp/Roster:alice12?secret="))
        let secondSecret = String(lines[1].dropFirst("Secret: ".count))
        let code = try oathCode(secondSecret)
        let confirmed = try ctl.run(["--json", "account", "totp", "confirm"], environment: ["ROSTER_CODE=\(code)"])
        #expect(confirmed.status == 0)
        #expect(confirmed.stdout == "{\"totp\":true}\n")
        #expect(try ctl.run(["--json", "account", "show"]).stdout.contains("\"totp\":true"))
        #expect(try ctl.run(["logout"]).status == 0)

        let noCode = try ctl.run(["login", "--username", "alice12"], environment: ["ROSTER_PASSWORD=secret1"])
        #expect(noCode.status == 1)
        #expect(noCode.stderr.contains("ROSTER_CODE"))
        // The confirming step is used up; the next one is in the window.
        let next = try oathCode(secondSecret, offsetSteps: 1)
        let login = try ctl.run(["--json", "login", "--username", "alice12", "--password-stdin"], input: "secret1\n\(next)\n")
        #expect(login.status == 0)
        #expect(login.stdout == "{\"username\":\"alice12\"}\n")
        let replay = try ctl.run(["--locale", "en", "login", "--username", "alice12"],
                                 environment: ["ROSTER_PASSWORD=secret1", "ROSTER_CODE=\(next)"])
        #expect(replay.status == 1)
        #expect(replay.stderr.contains("(invalid_code)"))
        let disabled = try ctl.run(["--json", "account", "totp", "disable"], environment: ["ROSTER_PASSWORD=secret1"])
        #expect(disabled.stdout == "{\"totp\":false}\n")
        #expect(try ctl.run(["login", "--username", "alice12"], environment: ["ROSTER_PASSWORD=secret1"]).status == 0)
    }

    @Test func exportHoldsNoSecretAndItsFileIsNeverReplaced() throws {
        let ctl = try Rosterctl(TestDaemon())
        try ctl.registerAndLogIn("alice12")
        #expect(try ctl.run(["contacts", "add", "Alice Smith", "--phone", "+1 555 010 9999"]).status == 0)
        _ = try ctl.run(["account", "recovery-codes"], environment: ["ROSTER_PASSWORD=secret1"])
        let token = try readFile(ctl.sessionPath).trimmingSuffixNewline
        let exported = try ctl.run(["--json", "account", "export"])
        #expect(exported.status == 0)
        let document = try JSONParser.parse(Array(exported.stdout.utf8))
        #expect(document["account"]?["username"] == "alice12")
        #expect(document["account"]?["recovery_codes_left"] == 10)
        #expect(document["sessions"]?.arrayValue?.count == 1)
        #expect(document["contacts"]?["format"] == "vcard")
        #expect(document["contacts"]?["data"]?.stringValue?.contains("FN:Alice Smith") == true)
        for secret in [token, "argon2", "$argon2id", "secret1"] { #expect(!exported.stdout.contains(secret), "\(secret)") }
        #expect(exported.stdout.split(separator: "\n").count == 1)
        let pretty = try ctl.run(["account", "export"])
        #expect(pretty.stdout.hasPrefix("{\n  \"account\": {\n"))
        let path = ctl.daemon.directory.path + "/alice12.json"
        let written = try ctl.run(["account", "export", "--output", path])
        #expect(written.status == 0)
        #expect(written.stdout == "exported to \(path)\n")
        #expect(fileMode(path) == 0o600)
        #expect(untimed(try readFile(path)) == untimed(pretty.stdout))
        let again = try ctl.run(["account", "export", "--output", path])
        #expect(again.status == 1)
        #expect(again.stderr == "rosterctl: account export: cannot write \(path): it exists already; not replacing it\n")
    }

    @Test func deleteIsForGoodAndTheNameIsFreeAgain() throws {
        let ctl = try Rosterctl(TestDaemon())
        try ctl.registerAndLogIn("alice12")
        #expect(try ctl.run(["contacts", "add", "Bob"]).status == 0)
        let other = try loggedInClient(ctl, "alice12", client: "other")
        let wrong = try ctl.run(["account", "delete", "--yes"], environment: ["ROSTER_PASSWORD=nope999"])
        #expect(wrong.status == 1)
        #expect(wrong.stderr.contains("(wrong_password)"))
        let deleted = try ctl.run(["--json", "account", "delete", "--yes", "--password-stdin"], input: "secret1\n")
        #expect(deleted.status == 0)
        #expect(deleted.stdout == "{\"deleted\":\"alice12\"}\n")
        #expect(fileMode(ctl.sessionPath) == nil)
        _ = try other.waitForEvent(loggedOut)
        #expect(try ctl.run(["check-username", "alice12"]).status == 0)
        try ctl.registerAndLogIn("alice12", password: "secret2")
        #expect(try ctl.run(["--json", "contacts", "list"]).stdout == "{\"items\":[],\"total\":0}\n")
    }
}
