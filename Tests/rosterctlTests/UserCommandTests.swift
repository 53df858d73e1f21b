import RosterProtocol
import Testing
@testable import rosterctl

/// Parsing every `user` action, and how `admin.users.*` answers are printed.
@Suite("rosterctl user commands")
struct UserCommandTests {
    @Test func everyActionParses() throws {
        #expect(try UserVerb.parse(["add", "alice12"]) == .add("alice12", email: nil, passwordStdin: false))
        #expect(try UserVerb.parse(["add", "alice12", "--email", "a@example.com", "--password-stdin"])
            == .add("alice12", email: "a@example.com", passwordStdin: true))
        #expect(try UserVerb.parse(["list"]) == .list(query: nil, .init()))
        #expect(try UserVerb.parse(["list", ""]) == .list(query: nil, .init()))
        #expect(try UserVerb.parse(["list", "ali", "--limit", "20", "--offset=40"]) == .list(query: "ali", .init(limit: 20, offset: 40)))
        #expect(try UserVerb.parse(["list", "--limit=5"]) == .list(query: nil, .init(limit: 5)))
        #expect(try UserVerb.parse(["show", "alice12"]) == .show("alice12"))
        #expect(try UserVerb.parse(["show", "a@example.com"]) == .show("a@example.com"))
        #expect(try UserVerb.parse(["lock", "alice12"]) == .lock("alice12", reason: nil))
        #expect(try UserVerb.parse(["lock", "alice12", "--reason", "phished, ticket 4411"])
            == .lock("alice12", reason: "phished, ticket 4411"))
        #expect(try UserVerb.parse(["lock", "alice12", "--reason="]) == .lock("alice12", reason: nil))
        #expect(try UserVerb.parse(["unlock", "alice12"]) == .unlock("alice12"))
        #expect(try UserVerb.parse(["rm", "alice12"]) == .remove("alice12", yes: false))
        #expect(try UserVerb.parse(["rm", "--yes", "alice12"]) == .remove("alice12", yes: true))
        #expect(try UserVerb.parse(["reset-limit", "alice12"]) == .resetLimit("alice12"))
        // `--` lets a name that starts with a dash through.
        #expect(try UserVerb.parse(["show", "--", "-odd"]) == .show("-odd"))
    }

    @Test func mistakesAreUsageErrors() {
        for arguments in [[], ["frobnicate"], ["add"], ["add", "a", "b"], ["add", "alice12", "--password", "secret1"],
                          ["list", "a", "b"], ["list", "--limit", "0"], ["list", "--limit", "x"], ["list", "--offset", "-1"],
                          ["list", "--limit"], ["show"], ["show", ""], ["show", "a", "b"], ["lock"], ["lock", "a", "--yes"],
                          ["lock", "a", "--reason"], ["unlock"], ["unlock", "a", "--reason", "r"], ["rm"], ["rm", "a", "b"],
                          ["rm", "--yes=1", "a"], ["reset-limit"], ["reset-limit", "a", "b"], ["delete", "a"]] {
            #expect(throws: UsageError.self, "\(arguments)") { try UserVerb.parse(arguments) }
        }
    }

    @Test func theListTableSaysWhatIsMissingAndLinesUp() {
        let users: [JSONValue] = [
            ["username": "alice12", "email": "a@example.com", "created_at": "2026-12-01T16:00:00Z",
             "last_login_at": "2026-12-01T17:00:00Z", "locked": false, "totp": true],
            ["username": "张三丰先生", "email": nil, "created_at": "2026-12-01T15:00:00Z", "last_login_at": nil,
             "locked": true, "totp": false],
        ]
        #expect(UserAdmin.table(users, details: false).render(legend: true) == [
            "USERNAME   EMAIL         CREATED              LAST LOG-IN          LOCKED TOTP",
            "alice12    a@example.com 2026-12-01T16:00:00Z 2026-12-01T17:00:00Z no     on",
            "张三丰先生 -             2026-12-01T15:00:00Z -                    yes    off",
        ])
        #expect(UserAdmin.table([], details: false).render(legend: false).isEmpty)
    }

    @Test func showAddsFailedLogInsSessionsAndTheLock() {
        let user: JSONValue = ["username": "bob123", "email": "", "created_at": "2026-12-01T15:00:00Z",
                               "last_login_at": "2026-12-01T15:30:00Z", "locked": false, "totp": false,
                               "locked_at": nil, "locked_reason": nil, "failed_logins": 3, "sessions": 2]
        #expect(UserAdmin.table([user], details: true).render(legend: true) == [
            "USERNAME EMAIL CREATED              LAST LOG-IN          LOCKED TOTP EMAIL VERIFIED FAILED LOG-INS SESSIONS LOCKED AT LOCK REASON",
            "bob123   -     2026-12-01T15:00:00Z 2026-12-01T15:30:00Z no     off  -              3              2        -         -",
        ])
        let locked: JSONValue = ["username": "bob123", "email": "b@example.com", "created_at": "2026-12-01T15:00:00Z",
                                 "last_login_at": nil, "locked": true, "totp": true, "email_verified": true,
                                 "locked_at": "2026-12-01T16:45:00Z",
                                 "locked_reason": "phished, ticket 4411", "failed_logins": 0, "sessions": 0]
        #expect(UserAdmin.table([locked], details: true).render(legend: true) == [
            "USERNAME EMAIL         CREATED              LAST LOG-IN LOCKED TOTP EMAIL VERIFIED FAILED LOG-INS SESSIONS LOCKED AT            LOCK REASON",
            "bob123   b@example.com 2026-12-01T15:00:00Z -           yes    on   yes            0              0        2026-12-01T16:45:00Z phished, ticket 4411",
        ])
        // Locked without a reason: its time, and `-` for the reason.
        let noReason: JSONValue = ["username": "bob123", "locked": true, "locked_at": "2026-12-01T16:45:00Z",
                                   "locked_reason": nil]
        #expect(UserAdmin.table([noReason], details: true).render(legend: false)
            == ["bob123 - - - yes - - - - 2026-12-01T16:45:00Z -"])
        // Sessions sent as a list count as how many there are; a field the daemon left out is `-`.
        let listed: JSONValue = ["username": "bob123", "sessions": [["id": "00112233aabbccdd"], ["id": "ffeeddcc00112233"]]]
        #expect(UserAdmin.table([listed], details: true).render(legend: false)
            == ["bob123 - - - - - - - 2 - -"])
        // The list has no lock columns, whatever an item holds.
        #expect(UserAdmin.table([locked], details: false).render(legend: true).first
            == "USERNAME EMAIL         CREATED              LAST LOG-IN LOCKED TOTP")
    }

    @Test func forbiddenSaysWhoMayUseTheAdminCommands() {
        let message = UserAdmin.forbidden("user lock").description
        #expect(message.hasPrefix("user lock: "))
        #expect(message.contains("root or the daemon's own user"))
        #expect(message.hasSuffix("(forbidden)"))
        #expect(UserAdmin.forbidden("user lock").status == 1)
    }

    @Test func helpListsEveryUserAction() {
        let help = helpText()
        for usage in ["user add NAME", "user list [QUERY]", "user show NAME", "user lock NAME [--reason TEXT]",
                      "user unlock NAME", "user rm NAME [--yes]", "user reset-limit NAME"] {
            #expect(help.contains("  " + usage), "\(usage)")
        }
    }
}
