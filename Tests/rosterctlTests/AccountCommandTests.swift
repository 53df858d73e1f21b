import Glibc
import RosterProtocol
import Testing
@testable import rosterctl

/// Parsing `account`, `sessions` and `recover`, where secrets come from, and how their answers are printed.
@Suite("rosterctl account commands")
struct AccountCommandTests {
    @Test func accountActionsParse() throws {
        #expect(try AccountVerb.parse(["show"]) == .show)
        #expect(try AccountVerb.parse(["password"]) == .password(passwordStdin: false))
        #expect(try AccountVerb.parse(["password", "--password-stdin"]) == .password(passwordStdin: true))
        #expect(try AccountVerb.parse(["email", "a@example.com"]) == .email("a@example.com", passwordStdin: false))
        #expect(try AccountVerb.parse(["email", "", "--password-stdin"]) == .email("", passwordStdin: true))
        #expect(try AccountVerb.parse(["delete"]) == .delete(yes: false, passwordStdin: false))
        #expect(try AccountVerb.parse(["delete", "--yes", "--password-stdin"]) == .delete(yes: true, passwordStdin: true))
        #expect(try AccountVerb.parse(["export"]) == .export(output: nil))
        #expect(try AccountVerb.parse(["export", "--output", "me.json"]) == .export(output: "me.json"))
        #expect(try AccountVerb.parse(["export", "--output=-"]) == .export(output: nil))
        #expect(try AccountVerb.parse(["recovery-codes"]) == .recoveryCodes(passwordStdin: false))
        #expect(try AccountVerb.parse(["totp", "enroll", "--password-stdin"]) == .totpEnroll(passwordStdin: true))
        #expect(try AccountVerb.parse(["totp", "confirm"]) == .totpConfirm(passwordStdin: false))
        #expect(try AccountVerb.parse(["totp", "disable"]) == .totpDisable(passwordStdin: false))
        #expect(try AccountVerb.parse(["verify-email"]) == .verifyEmail(code: nil))
        #expect(try AccountVerb.parse(["verify-email", "--code", "482913"]) == .verifyEmail(code: "482913"))
        #expect(try AccountVerb.parse(["verify-email", "--code=482913"]) == .verifyEmail(code: "482913"))
    }

    @Test func accountMistakesAreUsageErrors() {
        for arguments in [[], ["frobnicate"], ["show", "extra"], ["email"], ["email", "a@b.c", "d@e.f"], ["delete", "now"],
                          ["export", "--output"], ["export", "--output="], ["totp"], ["totp", "on"], ["totp", "enroll", "x"],
                          ["password", "--yes"], ["show", "--password-stdin"],
                          ["verify-email", "482913"], ["verify-email", "--code"], ["verify-email", "--code="],
                          ["verify-email", "--password-stdin"], ["verify_email"],
                          // A password is never an argument, in any spelling.
                          ["password", "--password", "secret1"], ["delete", "--password=secret1"]] {
            #expect(throws: UsageError.self, "\(arguments)") { try AccountVerb.parse(arguments) }
        }
    }

    @Test func sessionsParse() throws {
        #expect(try SessionsVerb.parse([]) == .list)
        #expect(try SessionsVerb.parse(["list"]) == .list)
        #expect(try SessionsVerb.parse(["revoke", "0123456789ABCDEF"]) == .revoke("0123456789abcdef"))
        #expect(try SessionsVerb.parse(["revoke-others"]) == .revokeOthers)
        for arguments in [["revoke"], ["revoke", "1234"], ["revoke", "0123456789abcdeg"], ["revoke-others", "x"],
                          ["list", "x"], ["kill"]] {
            #expect(throws: UsageError.self, "\(arguments)") { try SessionsVerb.parse(arguments) }
        }
    }

    @Test func recoverNeedsAUsernameAndTakesNoSecretAsAnArgument() throws {
        let recover = try RecoverVerb(arguments: ["--username", "alice12", "--password-stdin"])
        #expect(recover.username == "alice12")
        #expect(recover.passwordStdin)
        #expect(throws: UsageError.self) { try RecoverVerb(arguments: []) }
        #expect(throws: UsageError.self) { try RecoverVerb(arguments: ["--username", "a", "--code", "abcd"]) }
        #expect(throws: UsageError.self) { try RecoverVerb(arguments: ["--username", "a", "abcd-efgh"]) }
        #expect(!recover.byMail)
    }

    @Test func recoverByMailTakesTheAccountAfterEmailAndTheMailedCodeOnlyFromAPromptOrStdin() throws {
        let recover = try RecoverVerb(arguments: ["--email", "alice@example.com"])
        #expect(recover.username == "alice@example.com" && recover.byMail && !recover.passwordStdin)
        #expect(try RecoverVerb(arguments: ["--email=alice12", "--password-stdin"]).passwordStdin)
        for arguments in [["--email"], ["--email", ""], ["--email", "a", "--username", "a"], ["--email", "a", "123456"],
                          ["--email", "a", "--code", "123456"]] {
            #expect(throws: UsageError.self, "\(arguments)") { try RecoverVerb(arguments: arguments) }
        }
        // The code is mailed after the command starts: a variable set before cannot hold it.
        #expect(RecoverVerb.mailedCodeSource(passwordStdin: true, terminal: false) == .standardInput)
        #expect(RecoverVerb.mailedCodeSource(passwordStdin: false, terminal: true) == .prompt)
        #expect(RecoverVerb.mailedCodeSource(passwordStdin: false, terminal: false) == nil)
        #expect(!Secret.mailedCode.hidden && !Secret.mailedCode.confirm)
    }

    @Test func eachSecretHasItsOwnVariableAndStdinWinsOverAll() {
        let environment = ["ROSTER_PASSWORD": "old", "ROSTER_NEW_PASSWORD": "new", "ROSTER_CODE": "123456",
                           "ROSTER_RECOVERY_CODE": "abcd"]
        #expect(SecretSource.choose(.currentPassword, passwordStdin: false, environment: environment, terminal: false) == .environment("old"))
        #expect(SecretSource.choose(.newPassword, passwordStdin: false, environment: environment, terminal: false) == .environment("new"))
        #expect(SecretSource.choose(.oneTimeCode, passwordStdin: false, environment: environment, terminal: false) == .environment("123456"))
        #expect(SecretSource.choose(.recoveryCode, passwordStdin: false, environment: environment, terminal: false) == .environment("abcd"))
        #expect(SecretSource.choose(.newPassword, passwordStdin: true, environment: environment, terminal: true) == .standardInput)
        // Unset or empty: a prompt on a terminal, nothing for a script (a usage error before connecting).
        #expect(SecretSource.choose(.newPassword, passwordStdin: false, environment: ["ROSTER_NEW_PASSWORD": ""], terminal: true) == .prompt)
        #expect(SecretSource.choose(.newPassword, passwordStdin: false, environment: ["ROSTER_PASSWORD": "old"], terminal: false) == nil)
        // New passwords are typed twice at a prompt; codes are shown as typed, passwords and recovery codes not.
        #expect(Secret.newPassword.confirm && !Secret.currentPassword.confirm)
        #expect(!Secret.oneTimeCode.hidden && Secret.recoveryCode.hidden && Secret.password.hidden)
    }

    @Test func accountShowLinesLineUpAndSayWhatIsMissing() {
        let lines = AccountActions.showLines(["username": "alice12", "email": nil, "email_verified": false,
                                              "created_at": "2026-12-01T16:00:00Z", "totp": true, "recovery_codes_left": 9])
        #expect(lines == ["           Username: alice12",
                          "              Email: -",
                          "     Email verified: -",
                          "            Created: 2026-12-01T16:00:00Z",
                          "    Two-step log-in: on (log-ins need a one-time code)",
                          "Recovery codes left: 9"])
        #expect(AccountActions.showLines(["username": "bob123", "email": "b@example.com", "totp": false])[1...4]
            == ["              Email: b@example.com", "     Email verified: -", "            Created: -",
                "    Two-step log-in: off"])
        #expect(AccountActions.showLines(["username": "bob123", "email": "b@example.com", "email_verified": true])[2]
            == "     Email verified: yes")
        #expect(AccountActions.showLines(["username": "bob123", "email": "b@example.com", "email_verified": false])[2]
            == "     Email verified: no (rosterctl account verify-email)")
    }

    @Test func theSessionsTableMarksTheCurrentOne() {
        let items: [JSONValue] = [
            ["id": "00112233aabbccdd", "created_at": "2026-12-01T16:00:00Z", "last_used_at": "2026-12-01T16:05:00Z",
             "client": "rosterctl", "current": true],
            ["id": "ffeeddcc00112233", "created_at": "2026-12-01T15:00:00Z", "last_used_at": "2026-12-01T15:00:00Z",
             "client": nil, "current": false],
        ]
        #expect(SessionsVerb.table(items).render(legend: true) == [
            "ID               CREATED              LAST USED            CLIENT    CURRENT",
            "00112233aabbccdd 2026-12-01T16:00:00Z 2026-12-01T16:05:00Z rosterctl yes",
            "ffeeddcc00112233 2026-12-01T15:00:00Z 2026-12-01T15:00:00Z -         no",
        ])
    }

    @Test func anExportFileIsNewPrivateAndNeverReplaced() throws {
        let directory = "/tmp/rosterctl-export-\(getpid())"
        mkdir(directory, 0o700)
        defer {
            unlink(directory + "/me.json")
            unlink(directory + "/link.json")
            rmdir(directory)
        }
        try AccountExport.writeNewFile(directory + "/me.json", "{}\n")
        var info = stat()
        #expect(stat(directory + "/me.json", &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(info.st_size == 3)
        let again = #expect(throws: CommandFailure.self) { try AccountExport.writeNewFile(directory + "/me.json", "{\"x\":1}\n") }
        #expect(again?.description.contains("exists already") == true)
        #expect(stat(directory + "/me.json", &info) == 0 && info.st_size == 3)
        // A symlink is not followed, not even to a file that does not exist yet.
        symlink(directory + "/elsewhere.json", directory + "/link.json")
        #expect(throws: CommandFailure.self) { try AccountExport.writeNewFile(directory + "/link.json", "{}\n") }
        #expect(stat(directory + "/elsewhere.json", &info) != 0)
    }

    @Test func helpHasAnAccountGroupWithEveryNewVerb() {
        let help = helpText()
        #expect(help.contains("Account Commands:"))
        for usage in ["account show", "account password", "account email ADDRESS", "account delete", "account export",
                      "account recovery-codes", "account totp enroll", "account totp disable", "sessions revoke ID",
                      "sessions revoke-others", "recover --username NAME", "account verify-email [--code CODE]"] {
            #expect(help.contains("  " + usage), "\(usage)")
        }
    }
}
