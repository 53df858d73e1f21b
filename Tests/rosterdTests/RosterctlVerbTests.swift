import Glibc
import RosterProtocol
import Testing

/// rosterctl's verbs against the real daemon: golden `--json` outputs, exit codes and the kept session.
@Suite("rosterctl verbs against rosterd", .serialized)
struct RosterctlVerbTests {
    @Test func checkUsernameIsGoldenAndExitsByAvailability() throws {
        let ctl = try Rosterctl(TestDaemon())
        let short = try ctl.run(["--json", "--locale", "zh-Hans", "check-username", "abc"])
        #expect(short.status == 1)
        #expect(short.stdout == "{\"state\":\"invalid\",\"code\":\"too_short\",\"message\":\"用户名长度至少为6位\"}\n")
        let free = try ctl.run(["--json", "--locale", "zh-Hans", "check-username", "alice12"])
        #expect(free.status == 0)
        #expect(free.stdout == "{\"state\":\"valid\",\"code\":\"available\",\"message\":\"用户名可用\"}\n")
        let plain = try ctl.run(["--locale", "en", "check-username", "abc"])
        #expect(plain.stdout == "The username must be at least 6 characters long (too_short)\n")
    }

    @Test func registerKeepsTheSessionPrivatelyAndLaterCommandsResumeIt() throws {
        let ctl = try Rosterctl(TestDaemon())
        let registered = try ctl.run(["--json", "register", "--username", "alice12", "--password-stdin"], input: "secret1\n")
        #expect(registered.status == 0)
        #expect(registered.stdout == "{\"username\":\"alice12\"}\n")
        #expect(fileMode(ctl.sessionPath) == 0o600)
        #expect(fileMode(ctl.runtime + "/roster") == 0o700)
        let token = try readFile(ctl.sessionPath)
        #expect(!registered.stdout.contains(token.trimmingSuffixNewline))
        let whoami = try ctl.run(["--json", "whoami"])
        #expect(whoami.status == 0)
        #expect(whoami.stdout == "{\"user\":{\"username\":\"alice12\"}}\n")
        #expect(try ctl.run(["whoami"]).stdout == "alice12\n")
        let call = try ctl.run(["--json=pretty", "call", "session.whoami"])
        #expect(call.stdout == "{\n  \"user\": {\n    \"username\": \"alice12\"\n  }\n}\n")
    }

    @Test func logoutRevokesTheTokenAndRemovesTheFile() throws {
        let ctl = try Rosterctl(TestDaemon())
        try ctl.registerAndLogIn("alice12")
        let token = try readFile(ctl.sessionPath).trimmingSuffixNewline
        let logout = try ctl.run(["--json", "logout"])
        #expect(logout.status == 0)
        #expect(logout.stdout == "{\"user\":null,\"logged_out\":\"alice12\"}\n")
        #expect(fileMode(ctl.sessionPath) == nil)
        let whoami = try ctl.run(["--json", "whoami"])
        #expect(whoami.status == 1)
        #expect(whoami.stdout == "{\"user\":null}\n")
        // Revoked at the daemon, not only forgotten here.
        let client = try ctl.daemon.connect()
        #expect(try client.call("session.resume", ["token": .string(token)])["error"]?["data"]?["reason"] == "not_found")
        #expect(try ctl.run(["logout"]).status == 0)
    }

    @Test func loginAsAScriptAndItsFailures() throws {
        let ctl = try Rosterctl(TestDaemon())
        #expect(try ctl.run(["user", "add", "bob123", "--password-stdin"], input: "pw12345\n").status == 0)
        #expect(fileMode(ctl.sessionPath) == nil)
        let login = try ctl.run(["--json", "login", "--username", "bob123"], environment: ["ROSTER_PASSWORD=pw12345"])
        #expect(login.status == 0)
        #expect(login.stdout == "{\"username\":\"bob123\"}\n")
        #expect(fileMode(ctl.sessionPath) == 0o600)
        let wrong = try ctl.run(["--locale", "en", "login", "--username", "bob123", "--password-stdin"], input: "nope999\n")
        #expect(wrong.status == 1)
        #expect(wrong.stderr == "rosterctl: login: Wrong password (wrong_password)\n")
        let noPassword = try ctl.run(["login", "--username", "bob123"])
        #expect(noPassword.status == 2)
    }

    @Test func userAddIsGoldenAndRefusesATakenName() throws {
        let ctl = try Rosterctl(TestDaemon())
        let added = try ctl.run(["--json", "user", "add", "carol1", "--email", "c@example.com"], environment: ["ROSTER_PASSWORD=pw12345"])
        #expect(added.status == 0)
        #expect(added.stdout == "{\"username\":\"carol1\"}\n")
        let again = try ctl.run(["--locale", "zh-Hans", "user", "add", "Carol1", "--password-stdin"], input: "pw12345\n")
        #expect(again.status == 1)
        #expect(again.stderr.contains("(taken)"))
        let short = try ctl.run(["--locale", "zh-Hans", "user", "add", "abc", "--password-stdin"], input: "pw12345\n")
        #expect(short.stderr == "rosterctl: user add: 用户名长度至少为6位 (too_short)\n")
    }

    @Test func statusShowsTheCountersToTheDaemonsOwnUser() throws {
        let ctl = try Rosterctl(TestDaemon())
        try ctl.registerAndLogIn("alice12")
        let json = try ctl.run(["--json", "status"])
        #expect(json.status == 0)
        let status = try JSONParser.parse(Array(json.stdout.utf8))
        #expect(status["server"] == "rosterd")
        #expect(status["protocol"] == 1)
        #expect(status["stats"]?["users"] == 1)
        #expect(status["stats"]?["uptime_ms"]?.int64Value != nil)
        let table = try ctl.run(["status"]).stdout.split(separator: "\n")
        #expect(table.count == 2)
        #expect(table.first?.hasPrefix("SERVER") == true)
        let bare = try ctl.run(["--no-legend", "status"]).stdout.split(separator: "\n")
        #expect(bare.count == 1)
        #expect(bare.first?.hasPrefix("rosterd ") == true)
    }

    @Test func aStaleTokenIsDroppedQuietly() throws {
        let ctl = try Rosterctl(TestDaemon())
        mkdir(ctl.runtime + "/roster", 0o700)
        try writeFile(ctl.sessionPath, "not-a-token\n")
        let whoami = try ctl.run(["whoami"])
        #expect(whoami.status == 1)
        #expect(whoami.stderr == "rosterctl: not logged in\n")
        #expect(fileMode(ctl.sessionPath) == nil)
    }

    @Test func exitCodesForAMissingDaemonAndUsageMistakes() throws {
        let ctl = try Rosterctl(TestDaemon())
        let nowhere = ctl.daemon.directory.path + "/nobody.sock"
        for verb in [["status"], ["whoami"], ["check-username", "alice12"], ["watch"]] {
            let result = try ctl.run(verb, socket: nowhere)
            #expect(result.status == 1)
            #expect(result.stderr == "rosterctl: rosterd is not running (no one listens on \(nowhere))\n")
        }
        #expect(try ctl.run(["frobnicate"]).status == 2)
        #expect(try ctl.run(["check-username"]).status == 2)
        #expect(try ctl.run(["status", "--bogus"]).status == 2)
        #expect(try ctl.run(["--json=loud", "status"]).status == 2)
        #expect(try ctl.run(["register"]).status == 2)
        #expect(try ctl.run(["--help"]).stdout.contains("Session Commands:"))
    }

    @Test func loginRefusesWithoutARuntimeDirectory() throws {
        let daemon = try TestDaemon()
        let directory = daemon.directory.path
        try writeFile(directory + "/in", "secret1\n")
        let pid = try spawn([builtBinary("rosterctl"), "--socket", daemon.socketPath, "login", "--username", "x", "--password-stdin"],
                                     environment: ["PATH=/usr/bin:/bin"], stdinPath: directory + "/in",
                                     stdoutPath: directory + "/out", stderrPath: directory + "/err")
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        #expect(decode(status) == 1)
        #expect(try readFile(directory + "/err").contains("XDG_RUNTIME_DIR is not set"))
    }

    @Test func watchPrintsTheSessionsEventsUntilInterrupted() throws {
        let ctl = try Rosterctl(TestDaemon())
        try ctl.registerAndLogIn("alice12")
        let directory = ctl.daemon.directory.path
        try writeFile(directory + "/empty", "")
        let pid = try spawn([builtBinary("rosterctl"), "--socket", ctl.daemon.socketPath, "--json", "watch", "register"],
                                     environment: ctl.environment, stdinPath: directory + "/empty",
                                     stdoutPath: directory + "/watch.out", stderrPath: directory + "/watch.err")
        #expect(eventually { ((try? readFile(directory + "/watch.out")) ?? "").contains("\"type\":\"session\"") })
        // A second session registering the name this one's form holds would send `taken`; here: no form input, so
        // only the resume's session event. Then Ctrl-C.
        kill(pid, SIGINT)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        #expect(decode(status) == 130)
        #expect(try readFile(directory + "/watch.out") == "{\"type\":\"session\",\"user\":\"alice12\"}\n")
    }
}

extension String {
    var trimmingSuffixNewline: String { hasSuffix("\n") ? String(dropLast()) : self }
}
