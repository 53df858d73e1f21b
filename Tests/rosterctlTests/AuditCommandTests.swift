import RosterProtocol
import RosterTestSupport
import Testing
@testable import rosterctl

/// Parsing `rosterctl audit`, and how its entries are printed.
@Suite("rosterctl audit")
struct AuditCommandTests {
    @Test func everyOptionParses() throws {
        #expect(try AuditVerb.parse([]) == AuditCommand())
        #expect(try AuditVerb.parse(["--user", "alice12", "--event", "login", "--since", "1h", "--limit", "20"])
            == AuditCommand(user: "alice12", event: "login", since: "1h", limit: 20))
        #expect(try AuditVerb.parse(["--follow", "--user=a@example.com"]) == AuditCommand(user: "a@example.com", follow: true))
        #expect(try AuditVerb.parse(["--since", "2026-12-01T19:00:00+01:00"]) == AuditCommand(since: "2026-12-01T19:00:00+01:00"))
        #expect(try AuditVerb.parse(["--user=", "--event="]) == AuditCommand())
    }

    @Test func mistakesAreUsageErrors() {
        for arguments in [["alice12"], ["--user"], ["--since", "yesterday"], ["--since", ""], ["--since", "1y"],
                          ["--limit", "0"], ["--limit", "x"], ["--follow=yes"], ["--offset", "3"], ["--json"]] {
            #expect(throws: UsageError.self, "\(arguments)") { try AuditVerb.parse(arguments) }
        }
    }

    /// A mistyped event is refused before the daemon is asked, with every accepted one named; each is completed by
    /// bash and listed in the man page, so the three lists cannot drift apart.
    @Test func anUnknownEventIsAUsageErrorNamingEveryOne() throws {
        #expect(AuditVerb.events.count == 24)
        #expect(Set(AuditVerb.events).count == 24)
        for event in AuditVerb.events {
            #expect(try AuditVerb.parse(["--event", event]) == AuditCommand(event: event))
        }
        for typo in ["nonsense", "Login", "login_failed", " login", "logged_in"] {
            do {
                _ = try AuditVerb.parse(["--event", typo])
                Issue.record("\(typo) was accepted")
            } catch {
                #expect(error.description == "audit: --event takes one of " + AuditVerb.events.joined(separator: ", ")
                    + ", not '\(typo)'")
            }
        }
        let tree = SourceTree()
        let completion = try #require(tree.text(of: "shell/rosterctl.bash"))
        let eventCase = try #require(completion.components(separatedBy: "--event) COMPREPLY=($(compgen -W \"").dropFirst().first)
        let completed = eventCase.prefix { $0 != "\"" }.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
        #expect(completed == AuditVerb.events)
        let manual = try #require(tree.text(of: "man/rosterctl.1")).replacingOccurrences(of: "\\-", with: "-")
        for event in AuditVerb.events {
            #expect(manual.contains(" \(event) ,\n") || manual.contains(" \(event) ),\n"), "man: \(event)")
        }
    }

    private let entries: [JSONValue] = [
        ["id": 3, "time": "2026-12-01T19:04:05Z", "event": "login", "username": "bobby1", "peer_uid": 1000, "peer_pid": 4242,
         "client": "rosterctl", "outcome": "failed", "reason": "wrong_password", "suppressed": 4],
        ["id": 2, "time": "2026-12-01T19:00:00Z", "event": "recovery_codes_created", "username": "张三丰先生", "peer_uid": 0,
         "peer_pid": 17, "client": nil, "outcome": "succeeded", "reason": nil, "suppressed": 0],
        ["id": 1, "time": "2026-12-01T18:59:00Z", "event": "login", "username": nil, "peer_uid": 1000, "peer_pid": 99,
         "client": "web", "outcome": "failed", "reason": "unknown_user", "suppressed": 0],
    ]

    @Test func theTableSaysWhatIsMissingAndWhatTheCapLeftOut() {
        #expect(AuditPrinter.table(entries).render(legend: true) == [
            "TIME                 EVENT                  USER       OUTCOME   REASON                         PEER      CLIENT",
            "2026-12-01T19:04:05Z login                  bobby1     failed    wrong_password (+4 suppressed) 1000/4242 rosterctl",
            "2026-12-01T19:00:00Z recovery_codes_created 张三丰先生 succeeded -                              0/17      -",
            "2026-12-01T18:59:00Z login                  -          failed    unknown_user                   1000/99   web",
        ])
    }

    /// An entry a gateway wrote for someone names that person's address first, then the gateway's uid and pid.
    @Test func theRemoteAGatewaySpokeForLeadsThePeer() {
        let web: [JSONValue] = [
            ["id": 5, "time": "2026-12-01T19:05:00Z", "event": "login", "username": "bobby1", "peer_uid": 33,
             "peer_pid": 812, "client": "roster-web", "remote": "2001:db8::7", "outcome": "succeeded", "reason": nil,
             "suppressed": 0],
            ["id": 4, "time": "2026-12-01T19:04:59Z", "event": "login", "username": nil, "peer_uid": 33,
             "peer_pid": 812, "client": "roster-web", "remote": "203.0.113.5", "outcome": "failed",
             "reason": "unknown_user", "suppressed": 0],
            entries[0],
        ]
        #expect(AuditPrinter.table(web).render(legend: true) == [
            "TIME                 EVENT USER   OUTCOME   REASON                         PEER                 CLIENT",
            "2026-12-01T19:05:00Z login bobby1 succeeded -                              2001:db8::7 (33/812) roster-web",
            "2026-12-01T19:04:59Z login -      failed    unknown_user                   203.0.113.5 (33/812) roster-web",
            "2026-12-01T19:04:05Z login bobby1 failed    wrong_password (+4 suppressed) 1000/4242            rosterctl",
        ])
        #expect(AuditPrinter.aligned(AuditPrinter.cells(web[1]))
                == "2026-12-01T19:04:59Z login                  -            failed    unknown_user     203.0.113.5 (33/812) roster-web")
    }

    /// A log-in's entry says how it was proved after its event; every other entry (no `method`, or null) as before.
    @Test func aLogInsMethodFollowsItsEvent() {
        let logIns: [JSONValue] = ["password", "passkey", "recovery"].enumerated().map { index, method in
            ["id": .int(Int64(9 - index)), "time": "2026-12-01T19:10:00Z", "event": "login", "username": "bobby1",
             "peer_uid": 1000, "peer_pid": 4242, "client": "rosterctl", "remote": nil, "outcome": "succeeded",
             "reason": nil, "suppressed": 0, "method": .string(method)]
        }
        let unproved = JSONValue.object((entries[1].objectMembers ?? []) + [("method", .null)])
        #expect(AuditPrinter.table(logIns + [unproved]).render(legend: true) == [
            "TIME                 EVENT                  USER       OUTCOME   REASON PEER      CLIENT",
            "2026-12-01T19:10:00Z login (password)       bobby1     succeeded -      1000/4242 rosterctl",
            "2026-12-01T19:10:00Z login (passkey)        bobby1     succeeded -      1000/4242 rosterctl",
            "2026-12-01T19:10:00Z login (recovery)       bobby1     succeeded -      1000/4242 rosterctl",
            "2026-12-01T19:00:00Z recovery_codes_created 张三丰先生 succeeded -      0/17      -",
        ])
        // Within `--follow`'s EVENT column, so the rest stays lined up.
        #expect(AuditPrinter.aligned(AuditPrinter.cells(logIns[2]))
                == "2026-12-01T19:10:00Z login (recovery)       bobby1       succeeded -                1000/4242    rosterctl")
    }

    @Test func followedRowsLineUpWithoutKnowingTheLaterOnes() {
        let header = AuditPrinter.aligned(AuditPrinter.columns)
        let row = AuditPrinter.aligned(AuditPrinter.cells(entries[1]))
        #expect(header == "TIME                 EVENT                  USER         OUTCOME   REASON           PEER         CLIENT")
        #expect(row == "2026-12-01T19:00:00Z recovery_codes_created 张三丰先生   succeeded -                0/17         -")
    }

    /// `--follow`'s line for the daemon's `audit_missed`: how many entries are not shown, which ids, and where they are.
    @Test func missedEntriesAreOneLineSayingHowManyAndWhich() {
        #expect(AuditPrinter.missedLine(["type": "audit_missed", "count": 37, "first_id": 120, "last_id": 160])
            == "-- 37 entries (ids 120 to 160) not shown: this output was read too slowly; they are in the log (rosterctl audit) --")
        #expect(AuditPrinter.missedLine(["type": "audit_missed", "count": 1, "first_id": 7, "last_id": 7])
            == "-- 1 entry (id 7) not shown: this output was read too slowly; they are in the log (rosterctl audit) --")
    }

    @Test func helpNamesTheVerbAndItsOptions() {
        #expect(helpText().contains("  audit [--user NAME] [--event E] [--since T] [--limit N] [--follow]"))
        let own = verbHelpText(AuditVerb.configuration)
        for option in ["--user NAME", "--event E", "--since T", "--limit N", "--follow"] {
            #expect(own.contains("   " + option), "\(option)")
        }
    }
}
