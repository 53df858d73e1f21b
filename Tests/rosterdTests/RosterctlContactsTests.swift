import Glibc
import RosterProtocol
import Testing

/// Contact times are the clock's; golden outputs read them as 0.
func unstamped(_ text: String) -> String {
    var result = ""
    var rest = Substring(text)
    while let range = rest.firstRange(of: "_at\":") {
        result += rest[..<range.upperBound] + "0"
        rest = rest[range.upperBound...].drop { $0.isNumber }
    }
    return result + rest
}

/// `rosterctl contacts …` against the real daemon: golden `--json`, tables, exit codes and large imports.
@Suite("rosterctl contacts against rosterd", .serialized)
struct RosterctlContactsTests {
    private func loggedIn(_ daemon: TestDaemon? = nil) throws -> Rosterctl {
        let ctl = try Rosterctl(daemon ?? TestDaemon())
        try ctl.registerAndLogIn("alice12")
        return ctl
    }

    /// A new contact's uid is random (protocol.md §Contacts): it reads as U here.
    private func json(_ ctl: Rosterctl, _ arguments: String...) throws -> (status: Int32, stdout: String, stderr: String) {
        let result = try ctl.run(["--json", "--locale", "en", "contacts"] + arguments)
        let stdout = unstamped(result.stdout).replacing(/"uid":"[0-9a-f-]{36}"/) { _ in #""uid":"U""# }
        return (result.status, stdout, result.stderr)
    }

    @Test func withoutALogInEveryContactsCommandSaysSoAndExits1() throws {
        let ctl = try Rosterctl(TestDaemon())
        for arguments in [["contacts"], ["contacts", "list"], ["contacts", "search", "a"], ["contacts", "add", "A"],
                          ["contacts", "edit", "1", "--name", "B"], ["contacts", "rm", "1"], ["contacts", "import", "-"],
                          ["contacts", "export"]] {
            let result = try ctl.run(arguments)
            #expect(result.status == 1, "\(arguments)")
            #expect(result.stderr == "rosterctl: not logged in; run rosterctl login\n", "\(arguments)")
            #expect(result.stdout == "")
        }
        mkdir(ctl.runtime + "/roster", 0o700)
        try writeFile(ctl.sessionPath, "revoked-or-expired\n")
        let stale = try ctl.run(["contacts", "list"])
        #expect(stale.status == 1)
        #expect(stale.stderr == "rosterctl: not logged in (the stored session has expired); run rosterctl login\n")
        #expect(fileMode(ctl.sessionPath) == nil)
    }

    @Test func addListSearchEditAndRmAreGolden() throws {
        let ctl = try loggedIn()
        let added = try json(ctl, "add", "Alice Smith", "--phone", "+1 (555) 010-9999")
        #expect(added.status == 0)
        #expect(added.stdout == #"{"contact":{"id":1,"uid":"U","etag":"r1","name":"Alice Smith","phone":"+1 (555) 010-9999","email":null,"note":null,"created_at":0,"updated_at":0}}"# + "\n")
        #expect(try json(ctl, "add", "Alan Turing", "--email", "alan@example.com", "--phone", "").status == 0)
        #expect(try json(ctl, "add", "Bob Jones", "--note", "met at a conference").status == 0)

        let aliceJSON = #"{"id":1,"uid":"U","etag":"r1","name":"Alice Smith","phone":"+1 (555) 010-9999","email":null,"note":null,"created_at":0,"updated_at":0}"#
        let alanJSON = #"{"id":2,"uid":"U","etag":"r2","name":"Alan Turing","phone":null,"email":"alan@example.com","note":null,"created_at":0,"updated_at":0}"#
        let bobJSON = #"{"id":3,"uid":"U","etag":"r3","name":"Bob Jones","phone":null,"email":null,"note":"met at a conference","created_at":0,"updated_at":0}"#
        #expect(try json(ctl, "list").stdout == "{\"items\":[\(alanJSON),\(aliceJSON),\(bobJSON)],\"total\":3}\n")
        #expect(try json(ctl, "list", "--limit", "1", "--offset", "1").stdout == "{\"items\":[\(aliceJSON)],\"total\":3}\n")
        // A search's items say which characters matched (protocol.md "contacts.search"), in UTF-16 units.
        func found(_ contact: String, _ match: String) -> String { contact.dropLast() + #","match":"# + match + "}" }
        let alanAl = found(alanJSON, #"{"field":"name","ranges":[[0,2]]}"#)
        let aliceAl = found(aliceJSON, #"{"field":"name","ranges":[[0,2]]}"#)
        #expect(try json(ctl, "search", "al").stdout == "{\"items\":[\(alanAl),\(aliceAl)],\"total\":2}\n")
        let alicePhone = found(aliceJSON, #"{"field":"phone","ranges":[[4,8]]}"#)
        #expect(try json(ctl, "search", "555010").stdout == "{\"items\":[\(alicePhone)],\"total\":1}\n")
        #expect(try json(ctl, "search", "nobody").stdout == "{\"items\":[],\"total\":0}\n")

        let edited = try json(ctl, "edit", "1", "--phone", "", "--note", "colleague")
        #expect(edited.status == 0)
        #expect(edited.stdout == #"{"contact":{"id":1,"uid":"U","etag":"r4","name":"Alice Smith","phone":null,"email":null,"note":"colleague","created_at":0,"updated_at":0}}"# + "\n")

        let removed = try json(ctl, "rm", "3")
        #expect(removed.status == 0)
        #expect(removed.stdout == "{\"removed\":3}\n")
        let again = try ctl.run(["--locale", "en", "contacts", "rm", "3"])
        #expect(again.status == 1)
        #expect(again.stderr == "rosterctl: contacts rm 3: Not found (not_found)\n")

        #expect(try ctl.run(["contacts", "list"]).stdout
            == "ID NAME        PHONE EMAIL\n2  Alan Turing -     alan@example.com\n1  Alice Smith -     -\n\n2 contacts listed.\n")
        #expect(try ctl.run(["contacts", "list", "--no-legend"]).stdout == "2 Alan Turing - alan@example.com\n1 Alice Smith - -\n")
        #expect(try ctl.run(["contacts", "search", "ali", "--limit", "5"]).stdout
            == "ID NAME        PHONE EMAIL\n1  Alice Smith -     -\n\n1 contact listed.\n")
        #expect(try ctl.run(["contacts", "list", "--limit", "1"]).stdout.hasSuffix("\n1 of 2 contacts listed.\n"))
        let carol = try ctl.run(["--no-legend", "contacts", "add", "Carol", "--phone", "12"]).stdout
        let carolID = carol.prefix { $0 != " " }
        #expect(carol == "\(carolID) Carol 12 -\n")
        // Not on a terminal, bare `contacts` lists.
        #expect(try ctl.run(["--no-legend", "contacts"]).stdout == "2 Alan Turing -  alan@example.com\n1 Alice Smith -  -\n\(carolID) Carol       12 -\n")
    }

    @Test func refusalsExit1AndUsageMistakesExit2() throws {
        let ctl = try loggedIn()
        let phone = try ctl.run(["--locale", "en", "contacts", "add", "X", "--phone", "call me"])
        #expect(phone.status == 1)
        #expect(phone.stderr.hasSuffix("(invalid_phone)\n"))
        let name = try ctl.run(["--locale", "en", "contacts", "add", ""])
        #expect(name.status == 1)
        #expect(name.stderr.hasSuffix("(name_required)\n"))
        for arguments in [["frob"], ["edit", "1"], ["rm", "x"], ["rm"], ["list", "--limit", "0"], ["export", "--format", "json"],
                          ["search"], ["add", "A", "--bogus"]] {
            #expect(try ctl.run(["contacts"] + arguments).status == 2, "\(arguments)")
        }
        let missing = try ctl.run(["contacts", "import", ctl.daemon.directory.path + "/nope.csv"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("cannot open"))
    }

    @Test func exportThenImportElsewhereReproducesTheList() throws {
        let ctl = try loggedIn()
        #expect(try json(ctl, "add", "张三", "--phone", "138 0013 8000").status == 0)
        #expect(try json(ctl, "add", "Nguyễn Văn Ánh", "--note", "Hà Nội, \"quoted\"").status == 0)
        #expect(try json(ctl, "add", "김수현", "--email", "soohyun@example.kr").status == 0)
        let csv = try ctl.run(["contacts", "export", "--format", "csv"])
        #expect(csv.status == 0)
        // In the order they were added: the order pages follow (see protocol.md, contacts.export).
        #expect(csv.stdout == "name,phone,email,note\r\n张三,138 0013 8000,,\r\nNguyễn Văn Ánh,,,\"Hà Nội, \"\"quoted\"\"\"\r\n김수현,,soohyun@example.kr,\r\n")
        let vcard = try ctl.run(["contacts", "export"])
        #expect(vcard.stdout.hasPrefix("BEGIN:VCARD\r\nVERSION:4.0\r\n"))
        let exportedJSON = try json(ctl, "export", "--format", "csv")
        #expect(exportedJSON.stdout == JSONValue.object([("data", .string(csv.stdout))]).description + "\n")
        let before = csv.stdout

        let book = ctl.daemon.directory.path + "/book.vcf"
        try writeFile(book, vcard.stdout)
        #expect(try ctl.run(["logout"]).status == 0)
        try ctl.registerAndLogIn("bob1234")
        let imported = try json(ctl, "import", book)
        #expect(imported.status == 0)
        #expect(imported.stdout == "{\"added\":3,\"skipped\":0,\"errors\":[],\"errors_total\":0}\n")
        #expect(try ctl.run(["contacts", "export", "--format", "csv"]).stdout == before)
        let again = try ctl.run(["contacts", "import", book])
        #expect(again.status == 0)
        #expect(again.stdout == "added 0, skipped 3, rejected 0\n")
    }

    @Test func importReportsEachRejectedLineAndExits1() throws {
        let ctl = try loggedIn()
        let file = ctl.daemon.directory.path + "/people.txt"
        try writeFile(file, "Name,Phone,Email\r\nWang Wu,123,\r\n,456,\r\n\"Li\r\nSi\",,not-an-email\r\nZhao,1,2,3\r\n")
        let human = try ctl.run(["contacts", "import", file])
        #expect(human.status == 1)
        #expect(human.stdout == "added 1, skipped 0, rejected 3\n")
        #expect(human.stderr == "\(file):3: name_required (no name)\n\(file):4: invalid_email (not an email address)\n"
            + "\(file):6: wrong_field_count (more or fewer fields than the header)\n")
        let script = try ctl.run(["--json", "contacts", "import", "-", "--format", "csv"], input: try readFile(file))
        #expect(script.status == 1)
        #expect(script.stdout == #"{"added":0,"skipped":1,"errors":[{"line":3,"reason":"name_required"},{"line":4,"reason":"invalid_email"},{"line":6,"reason":"wrong_field_count"}],"errors_total":3}"# + "\n")
        // The content says vCard even without the extension.
        let cards = try ctl.run(["--json", "contacts", "import", "-"], input: "BEGIN:VCARD\nFN:Ada\nEND:VCARD\nstray\n")
        #expect(cards.stdout == #"{"added":1,"skipped":0,"errors":[{"line":4,"reason":"unexpected_line"}],"errors_total":1}"# + "\n")
    }

    @Test func aCSVOverALineLimitIsImportedInPiecesWithTheFilesLineNumbers() throws {
        let ctl = try loggedIn()
        // Over 1 MB: sixteen times the daemon's line limit. Quoted line breaks in notes make records and
        // lines differ, so a mapping that counted records instead of lines would be caught.
        var text = "name,phone,email,note\n"
        var line = 2
        var bad: [Int] = []
        for index in 1...15_000 {
            if index % 3000 == 0 {
                bad.append(line)
                text += "Broken \(index),not a phone,,\n"
                line += 1
            } else if index % 500 == 0 {
                text += "Person \(index),+1 555 \(index),p\(index)@example.com,\"two\nlines\"\n"
                line += 2
            } else {
                text += "Person \(index),+1 555 \(index),p\(index)@example.com,imported from the old phone\n"
                line += 1
            }
        }
        #expect(text.utf8.count > 1_000_000)
        let file = ctl.daemon.directory.path + "/big.csv"
        try writeFile(file, text)
        let result = try json(ctl, "import", file)
        #expect(result.status == 1)
        let errors = bad.map { "{\"line\":\($0),\"reason\":\"invalid_phone\"}" }.joined(separator: ",")
        #expect(result.stdout == "{\"added\":\(15_000 - bad.count),\"skipped\":0,\"errors\":[\(errors)],\"errors_total\":\(bad.count)}\n")
        let listed = try JSONParser.parse(Array(try json(ctl, "list", "--limit", "1").stdout.utf8))
        #expect(listed["total"] == .int(15_000 - bad.count))
    }

    /// A book larger than one answer may hold is exported whole, page by page, and imports back.
    @Test func anExportLargerThanOneAnswerFollowsThePages() throws {
        let ctl = try loggedIn(TestDaemon(config: "[Server]\nOutputSoftLimitBytes=64K\nOutputHardLimitBytes=256K\n"))
        var text = "name,phone,email,note\n"
        for index in 1...2_500 { text += "Person \(index),+1 555 \(index),p\(index)@example.com,\"a note, \"\"quoted\"\"\nover two lines\"\n" }
        let file = ctl.daemon.directory.path + "/book.csv"
        try writeFile(file, text)
        #expect(try ctl.run(["contacts", "import", file]).status == 0)
        let csv = try ctl.run(["contacts", "export", "--format", "csv"])
        #expect(csv.status == 0, "\(csv.stderr)")
        #expect(csv.stdout.components(separatedBy: "name,phone,email,note\r\n").count == 2)
        #expect(csv.stdout.components(separatedBy: "\r\nPerson ").count == 2_501)
        // More than the 128 KiB one answer may hold here: the daemon refuses it whole, so rosterctl paged.
        let client = try ctl.daemon.connect()
        _ = try client.call("auth.login", ["username": "alice12", "password": "secret1"])
        #expect(try client.call("contacts.export", ["format": "csv"])["error"]?["data"]?["reason"] == "answer_too_large")
        let vcard = try ctl.run(["contacts", "export"])
        #expect(vcard.status == 0)
        #expect(vcard.stdout.components(separatedBy: "BEGIN:VCARD\r\n").count == 2_501)
        let exportedJSON = try json(ctl, "export", "--format", "csv")
        #expect(exportedJSON.stdout == JSONValue.object([("data", .string(csv.stdout))]).description + "\n")

        let book = ctl.daemon.directory.path + "/book.vcf"
        try writeFile(book, vcard.stdout)
        #expect(try ctl.run(["logout"]).status == 0)
        try ctl.registerAndLogIn("bob1234")
        #expect(try ctl.run(["contacts", "import", book]).stdout == "added 2500, skipped 0, rejected 0\n")
        let again = try ctl.run(["contacts", "export", "--format", "csv"])
        #expect(again.stdout == csv.stdout)
    }

    /// The daemon lists the first 100 rejections of each answer; rosterctl counts the rest and says so.
    @Test func rejectionsBeyondWhatTheDaemonListsAreCounted() throws {
        let ctl = try loggedIn()
        let file = ctl.daemon.directory.path + "/bad.csv"
        try writeFile(file, "name,phone\n" + (1...150).map { "Bad \($0),letters\n" }.joined())
        let result = try ctl.run(["contacts", "import", file])
        #expect(result.status == 1)
        #expect(result.stdout == "added 0, skipped 0, rejected 150\n")
        #expect(result.stderr.hasSuffix("\(file): 50 more rejected, not listed by rosterd\n"))
        #expect(result.stderr.components(separatedBy: "invalid_phone").count == 101)
    }

    @Test func aDaemonWithASmallerLineLimitGetsSmallerPieces() throws {
        let ctl = try loggedIn(TestDaemon(config: "[Server]\nMaxLineBytes=4K\n"))
        var text = ""
        for index in 1...400 {
            text += "BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Card \(index)\r\n" + (index == 333 ? "EMAIL:nope\r\n" : "") + "END:VCARD\r\n"
        }
        let file = ctl.daemon.directory.path + "/cards.vcf"
        try writeFile(file, text)
        let result = try json(ctl, "import", file)
        // Card 333 starts on line 4 × 332 + 1; its EMAIL is three lines further.
        #expect(result.stdout == "{\"added\":399,\"skipped\":0,\"errors\":[{\"line\":\(4 * 332 + 1 + 3),\"reason\":\"invalid_email\"}],\"errors_total\":1}\n")
        #expect(result.status == 1)
    }

    /// put-vcard stores a file as it is, vcard writes it back byte for byte, changes lists it and then its removal.
    @Test func putVCardVCardAndChangesFollowACard() throws {
        let ctl = try loggedIn()
        let path = ctl.runtime + "/card.vcf"
        let card = "BEGIN:VCARD\r\nVERSION:3.0\r\nN:Appleseed;Johnny;;;\r\nFN:Johnny Appleseed\r\nitem1.X-ABLabel:x\r\nEND:VCARD\r\n"
        try writeFile(path, card)
        let put = try ctl.run(["--locale", "en", "contacts", "put-vcard", "johnny", path, "--if-none-match"])
        #expect(put.status == 0 && put.stdout == "created johnny, etag r1\n", "\(put)")
        #expect(try ctl.run(["contacts", "vcard", "johnny"]).stdout == card)
        let again = try ctl.run(["--locale", "en", "contacts", "put-vcard", "johnny", path, "--if-match", "r0"])
        #expect(again.status == 1)
        #expect(again.stderr.contains("precondition_failed"))
        let changes = try json(ctl, "changes")
        #expect(changes.stdout.hasPrefix(#"{"token":"ct1-1","changed":[{"id":1,"uid":"johnny","etag":"r1","name":"Johnny Appleseed""#))
        #expect(try json(ctl, "rm", "1").status == 0)
        #expect(try json(ctl, "changes", "--since", "ct1-1").stdout == #"{"token":"ct1-2","changed":[],"removed":["johnny"]}"# + "\n")
    }
}

/// The live contact search in a real terminal, against the daemon's real 300 ms throttle.
@Suite("rosterctl contact search in tmux", .serialized)
struct RosterctlContactSearchTests {
    private func start(_ ctl: Rosterctl, _ arguments: String) throws -> TmuxPane {
        let modes = "stty -a | tr ' ;' '\\n\\n' | grep -x -e icanon -e -icanon -e echo -e -echo | tr '\\n' ' '"
        let command = "env XDG_RUNTIME_DIR=\(ctl.runtime) \(builtBinary("rosterctl")) --socket \(ctl.daemon.socketPath) \(arguments); "
            + "echo EXIT=$?; echo MODES=$(\(modes)); sleep 600"
        return try TmuxPane(command)
    }

    private func seeded() throws -> Rosterctl {
        let ctl = try Rosterctl(TestDaemon())
        try ctl.registerAndLogIn("alice12")
        for (name, phone) in [("Alice Smith", "+1 (555) 010-9999"), ("Alan Turing", "+44 20 7946 0958"), ("Bob Jones", "555 0100")] {
            #expect(try ctl.run(["contacts", "add", name, "--phone", phone]).status == 0)
        }
        return ctl
    }

    /// Whether the search line comes to show a box starting with `box` and the count of results for it
    /// (a pending search would show `… n/total`).
    private func searchLine(_ pane: TmuxPane, box: String, count: String) -> Bool {
        eventually {
            let first = pane.screen().split(separator: "\n", omittingEmptySubsequences: false).first ?? ""
            return first.contains("[" + box) && first.hasSuffix("]  \(count)")
        }
    }

    @Test func aLiveContactSearchNarrowsAsYouType() throws {
        let ctl = try seeded()
        let pane = try start(ctl, "--locale en contacts")
        #expect(searchLine(pane, box: "Search by name", count: "3/3"))
        pane.type("a")
        #expect(searchLine(pane, box: "a ", count: "2/2"))
        #expect(pane.screen().contains("Alan Turing"))
        #expect(pane.screen().contains("Alice Smith"))
        #expect(!pane.screen().contains("Bob Jones"))
        pane.type("l")
        #expect(searchLine(pane, box: "al ", count: "2/2"))
        pane.type("i")
        #expect(searchLine(pane, box: "ali ", count: "1/1"))
        #expect(pane.screen().contains("› Alice Smith"))
        #expect(!pane.screen().contains("Alan Turing"))
        pane.send("Enter")
        #expect(pane.waitFor("EXIT=0"))
        #expect(pane.screen().contains("ID:    1\nName:  Alice Smith\nPhone: +1 (555) 010-9999\nEXIT=0"))
        #expect(pane.waitFor("MODES=icanon echo"))
    }

    @Test func theArrowsSelectAndEscapeCancelsWith130() throws {
        let ctl = try seeded()
        let pane = try start(ctl, "--locale zh-Hans contacts")
        #expect(searchLine(pane, box: "输入", count: "3/3"))
        pane.type("555")
        #expect(searchLine(pane, box: "555 ", count: "2/2"))
        pane.send("Down")
        #expect(eventually { pane.screen().contains("› Bob Jones") })
        pane.send("Enter")
        #expect(pane.waitFor("EXIT=0"))
        #expect(pane.screen().contains("Name:  Bob Jones"))

        let cancelled = try start(ctl, "--locale en contacts")
        #expect(searchLine(cancelled, box: "Search by name", count: "3/3"))
        cancelled.type("bo")
        cancelled.send("Escape")
        #expect(cancelled.waitFor("EXIT=130"))
        #expect(cancelled.waitFor("MODES=icanon echo"))
    }
}
