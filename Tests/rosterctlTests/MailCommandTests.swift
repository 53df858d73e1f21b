import RosterProtocol
import Testing
@testable import rosterctl

/// Parsing `mail list` and how `admin.mail.list` answers are printed.
@Suite("rosterctl mail commands")
struct MailCommandTests {
    @Test func listParsesItsStatusAndLimit() throws {
        #expect(try MailVerb.parse(["list"]) == MailListCommand())
        #expect(try MailVerb.parse(["list"]).limit == 100)
        #expect(try MailVerb.parse(["list", "--status", "failed"]) == MailListCommand(status: "failed"))
        #expect(try MailVerb.parse(["list", "--status=queued", "--limit", "5"]) == MailListCommand(status: "queued", limit: 5))
        #expect(try MailVerb.parse(["list", "--limit=1000"]).limit == 1_000)
    }

    @Test func mistakesAreUsageErrorsThatSayWhatIsTaken() {
        for arguments in [[], ["ls"], ["list", "x"], ["list", "--status"], ["list", "--status", "Sent"], ["list", "--limit", "0"],
                          ["list", "--limit", "1001"], ["list", "--limit", "x"], ["list", "--offset", "3"], ["list", "--follow"]] {
            #expect(throws: UsageError.self, "\(arguments)") { try MailVerb.parse(arguments) }
        }
        #expect(throws: UsageError.self) { try MailVerb(arguments: ["list", "--status", "lost"]) }
        do {
            _ = try MailVerb.parse(["list", "--status", "lost"])
        } catch {
            #expect(error.description == "mail list: --status takes one of queued, sent, failed, not 'lost'")
        }
    }

    @Test func theTableShowsEachMailWithoutItsCodeAndSaysWhatIsMissing() {
        let items: [JSONValue] = [
            ["id": 12, "recipient": "alice@example.com", "kind": "recovery", "status": "queued", "attempts": 2,
             "last_error": "tempfail", "queued_at": "2026-12-03T15:00:00Z", "next_attempt_at": "2026-12-03T15:02:00Z",
             "sent_at": nil],
            ["id": 3, "recipient": "张三@example.cn", "kind": "verification", "status": "sent", "attempts": 1,
             "last_error": nil, "queued_at": "2026-12-03T14:00:00Z", "next_attempt_at": nil,
             "sent_at": "2026-12-03T14:00:01Z"],
            ["id": 1, "recipient": "bob@example.com", "kind": "password_changed", "status": "failed"],
        ]
        #expect(MailVerb.table(items).render(legend: true) == [
            "ID RECIPIENT         KIND             STATUS ATTEMPTS LAST ERROR QUEUED AT",
            "12 alice@example.com recovery         queued 2        tempfail   2026-12-03T15:00:00Z",
            "3  张三@example.cn   verification     sent   1        -          2026-12-03T14:00:00Z",
            "1  bob@example.com   password_changed failed -        -          -",
        ])
        #expect(MailVerb.table([]).render(legend: false).isEmpty)
    }

    @Test func aHostileRecipientOrErrorIsShownEscaped() {
        let item: JSONValue = ["id": 1, "recipient": "a@example.com\n2 forged", "kind": "recovery", "status": "failed",
                               "attempts": 9, "last_error": "x\u{1B}[8m", "queued_at": "2026-12-03T15:00:00Z"]
        let lines = MailVerb.table([item]).render(legend: false)
        #expect(lines == ["1 a@example.com\\n2 forged recovery failed 9 x\\u{1b}[8m 2026-12-03T15:00:00Z"])
    }

    @Test func helpListsMailUnderTheDaemonsCommands() {
        let help = helpText()
        #expect(help.contains("  mail list [--status S] [--limit N]"))
        #expect(help.contains("  account verify-email [--code CODE]"))
        #expect(help.contains("  recover --username NAME|--email NAME"))
    }
}
