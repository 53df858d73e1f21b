import Glibc
import RosterProtocol
import Testing

/// `rosterctl user list|show|lock|unlock|rm|reset-limit` against the real daemon's `admin.users.*`: golden
/// `--json`, the tables, exit codes, what a locked user's live connection sees, and a refused peer's message.
@Suite("rosterctl user administration against rosterd", .serialized)
struct RosterctlUserTests {
    private func addUsers(_ ctl: Rosterctl) throws {
        for (name, email) in [("alice12", "a@example.com"), ("bob123", "b@example.com"), ("carol1", "")] {
            let added = try ctl.run(["user", "add", name] + (email.isEmpty ? [] : ["--email", email]), input: "secret1\n",
                                    environment: ["ROSTER_PASSWORD=secret1"])
            guard added.status == 0 else { throw HarnessError(description: "user add failed: \(added.stderr)") }
        }
    }

    @Test func listAndShowAreGoldenAndPageAsAsked() throws {
        let ctl = try Rosterctl(TestDaemon())
        try addUsers(ctl)
        let json = try ctl.run(["--json", "user", "list", "example"])
        #expect(json.status == 0)
        #expect(untimed(json.stdout) == "{\"items\":["
            + "{\"username\":\"alice12\",\"email\":\"a@example.com\",\"email_verified\":false,\"created_at\":\"T\",\"last_login_at\":null,\"locked\":false,\"totp\":false},"
            + "{\"username\":\"bob123\",\"email\":\"b@example.com\",\"email_verified\":false,\"created_at\":\"T\",\"last_login_at\":null,\"locked\":false,\"totp\":false}"
            + "],\"total\":2}\n")
        let table = try ctl.run(["user", "list"]).stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(table.first == "USERNAME EMAIL         CREATED              LAST LOG-IN LOCKED TOTP")
        #expect(table.dropFirst().first?.hasPrefix("alice12  a@example.com 20") == true)
        #expect(table.dropFirst().first?.hasSuffix("Z -           no     off") == true)
        #expect(table.suffix(3) == ["", "3 users listed.", ""])
        // A page of the list says how much of it was printed.
        let page = try ctl.run(["--no-legend", "user", "list", "--limit", "1", "--offset", "1"])
        #expect(page.stdout.hasPrefix("bob123 "))
        #expect(page.stdout.split(separator: "\n").count == 1)
        #expect(try ctl.run(["user", "list", "--limit", "2"]).stdout.hasSuffix("\n2 of 3 users listed.\n"))

        let show = try ctl.run(["user", "show", "b@example.com"])
        #expect(show.status == 0)
        #expect(show.stdout.hasPrefix("USERNAME EMAIL         CREATED              LAST LOG-IN LOCKED TOTP EMAIL VERIFIED "
            + "FAILED LOG-INS SESSIONS LOCKED AT LOCK REASON\nbob123   b@example.com 20"))
        #expect(show.stdout.hasSuffix("Z -           no     off  no             0              0        -         -\n"), "\(show.stdout)")
        let missing = try ctl.run(["--locale", "en", "user", "show", "nobody1"])
        #expect(missing.status == 1)
        #expect(missing.stderr.hasPrefix("rosterctl: user show: ") && missing.stderr.hasSuffix("(not_found)\n"), "\(missing.stderr)")
    }

    @Test func aLockEndsTheLiveSessionAndUnlockRestoresLogIn() throws {
        let ctl = try Rosterctl(TestDaemon())
        try addUsers(ctl)
        let live = try ctl.daemon.connect()
        _ = try live.call("session.hello", ["locale": "en"])
        #expect(try live.call("auth.login", ["username": "alice12", "password": "secret1"])["result"]?["token"] != nil)

        let locked = try ctl.run(["user", "lock", "alice12", "--reason", "phished, ticket 4411"])
        #expect(locked.status == 0)
        #expect(locked.stdout == "locked alice12\n")
        _ = try live.waitForEvent(loggedOut)
        let refused = try ctl.run(["--locale", "en", "login", "--username", "alice12", "--password-stdin"], input: "secret1\n")
        #expect(refused.status == 1)
        #expect(refused.stderr.hasSuffix("(locked)\n"), "\(refused.stderr)")
        let shown = try ctl.run(["--json", "user", "show", "alice12"]).stdout
        #expect(shown.contains("\"locked\":true,"))
        #expect(shown.contains("\"locked_reason\":\"phished, ticket 4411\","), "\(shown)")
        let lockedAt = try #require(try JSONParser.parse(Array(shown.utf8))["user"]?["locked_at"]?.stringValue)
        #expect(lockedAt.count == 20 && lockedAt.hasSuffix("Z"), "RFC 3339, UTC, to the second: \(lockedAt)")
        let lockTable = try ctl.run(["user", "show", "alice12"]).stdout.split(separator: "\n").map(String.init)
        #expect(lockTable.first?.hasSuffix(" LOCKED AT            LOCK REASON") == true, "\(lockTable)")
        #expect(lockTable.dropFirst().first?.hasSuffix(" \(lockedAt) phished, ticket 4411") == true, "\(lockTable)")

        let unlocked = try ctl.run(["--json", "user", "unlock", "alice12"])
        #expect(unlocked.status == 0)
        #expect(unlocked.stdout == "{}\n")
        #expect(try ctl.run(["--json", "user", "show", "alice12"]).stdout.contains("\"locked_at\":null,\"locked_reason\":null,"))
        #expect(try ctl.run(["login", "--username", "alice12", "--password-stdin"], input: "secret1\n").status == 0)
    }

    @Test func resetLimitClearsTheFailedLogIns() throws {
        let ctl = try Rosterctl(TestDaemon())
        try addUsers(ctl)
        for _ in 0..<2 {
            #expect(try ctl.run(["login", "--username", "bob123", "--password-stdin"], input: "wrong99\n").status == 1)
        }
        #expect(try ctl.run(["--json", "user", "show", "bob123"]).stdout.contains("\"failed_logins\":2,"))
        let reset = try ctl.run(["user", "reset-limit", "bob123"])
        #expect(reset.status == 0)
        #expect(reset.stdout == "cleared the failed log-ins of bob123\n")
        #expect(try ctl.run(["--json", "user", "show", "bob123"]).stdout.contains("\"failed_logins\":0,"))
    }

    @Test func rmNeedsYesWithoutATerminalAndDeletes() throws {
        let ctl = try Rosterctl(TestDaemon())
        try addUsers(ctl)
        let unasked = try ctl.run(["user", "rm", "carol1"])
        #expect(unasked.status == 2)
        #expect(unasked.stderr == "rosterctl: user rm: without a terminal to type the name on, pass --yes\n")
        #expect(try ctl.run(["user", "show", "carol1"]).status == 0)
        let removed = try ctl.run(["user", "rm", "--yes", "carol1"])
        #expect(removed.status == 0)
        #expect(removed.stdout == "deleted user carol1\n")
        #expect(try ctl.run(["user", "show", "carol1"]).status == 1)
        #expect(try ctl.run(["check-username", "carol1"]).status == 0)
    }

    @Test func anotherUserReadsWhoMayAdminister() throws {
        let daemon = try TestDaemon()
        let ctl = try Rosterctl(daemon)
        chmod(daemon.directory.path, 0o755)
        chmod(daemon.directory.path + "/run", 0o755)
        chmod(daemon.socketPath, 0o666)
        chmod(ctl.runtime, 0o777)
        let result = try capture(["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", builtBinary("rosterctl"),
                                  "--socket", daemon.socketPath, "user", "lock", "alice12"], in: daemon.directory)
        #expect(result.status == 1)
        #expect(result.stderr == "rosterctl: user lock: administrator commands need root or the daemon's own user (forbidden)\n",
                "\(result)")
    }
}
