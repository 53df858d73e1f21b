import RosterProtocol
import Testing
@testable import rosterctl

@Suite("contacts arguments")
struct ContactsCommandTests {
    private func parse(_ words: String...) throws -> ContactsCommand { try ContactsVerb.parse(words) }

    @Test func noActionIsTheLiveSearch() throws {
        #expect(try parse() == .interactive)
    }

    @Test func listAndSearchTakeAPage() throws {
        #expect(try parse("list") == .list(.init()))
        #expect(try parse("list", "--limit", "5", "--offset=10") == .list(.init(limit: 5, offset: 10)))
        #expect(try parse("search", "ali") == .search("ali", .init()))
        #expect(try parse("search", "--limit", "1", "--", "-5") == .search("-5", .init(limit: 1)))
        #expect(throws: UsageError.self) { try parse("list", "--limit", "0") }
        #expect(throws: UsageError.self) { try parse("list", "--offset", "-1") }
        #expect(throws: UsageError.self) { try parse("list", "extra") }
        #expect(throws: UsageError.self) { try parse("search") }
        #expect(throws: UsageError.self) { try parse("search", "a", "b") }
    }

    @Test func addLeavesEmptyOptionsOutAndEditSendsThemToClear() throws {
        #expect(try parse("add", "Alice Smith", "--phone", "+1 555", "--email=", "--note", "hi")
            == .add(.init(name: "Alice Smith", phone: "+1 555", note: "hi")))
        #expect(try parse("edit", "7", "--email", "", "--name", "Al") == .edit(7, .init(name: "Al", email: "")))
        #expect(throws: UsageError.self) { try parse("add") }
        #expect(throws: UsageError.self) { try parse("add", "A", "--name", "B") }
        #expect(throws: UsageError.self) { try parse("edit", "7") }
        #expect(throws: UsageError.self) { try parse("edit", "seven", "--name", "x") }
    }

    @Test func rmTakesOnePositiveID() throws {
        #expect(try parse("rm", "12") == .remove(12))
        #expect(throws: UsageError.self) { try parse("rm") }
        #expect(throws: UsageError.self) { try parse("rm", "0") }
        #expect(throws: UsageError.self) { try parse("rm", "1", "2") }
    }

    @Test func importAndExportTakeAFormat() throws {
        #expect(try parse("import", "book.vcf") == .importFile("book.vcf", nil))
        #expect(try parse("import", "-", "--format", "CSV") == .importFile("-", .csv))
        #expect(try parse("export") == .export(.vcard))
        #expect(try parse("export", "--format=csv") == .export(.csv))
        #expect(throws: UsageError.self) { try parse("export", "--format", "json") }
        #expect(throws: UsageError.self) { try parse("import") }
    }

    @Test func unknownActionsAndOptionsAreUsageErrors() {
        #expect(throws: UsageError.self) { try parse("delete", "1") }
        #expect(throws: UsageError.self) { try parse("--limit", "3") }
        #expect(throws: UsageError.self) { try parse("list", "--phone", "1") }
    }

    @Test func globalOptionsAfterTheActionStayGlobal() throws {
        let (options, words) = try parseCommandLine(["contacts", "list", "--no-legend", "--json", "--limit", "3"])
        #expect(options.noLegend)
        #expect(options.json == .short)
        #expect(try ContactsVerb.parse(Array(words.dropFirst())) == .list(.init(limit: 3)))
    }

    @Test func theHelpListsEveryAction() {
        let help = helpText()
        #expect(help.contains("Contact Commands:"))
        for action in ["contacts list", "contacts search QUERY", "contacts add NAME", "contacts edit ID", "contacts rm ID",
                       "contacts import FILE", "contacts export"] {
            #expect(help.contains("  " + action))
        }
    }

    @Test func theTableHasTheFourColumnsAndDashesForWhatIsMissing() throws {
        let contacts = [ContactRecord(id: 2, name: "张三", phone: "138 0013 8000"), ContactRecord(id: 10, name: "Bob", email: "b@x.org")]
        #expect(contactsTable(contacts).render(legend: true) == ["ID NAME PHONE         EMAIL", "2  张三 138 0013 8000 -",
                                                                 "10 Bob  -             b@x.org"])
        #expect(contactsTable(contacts).render(legend: false).first == "2  张三 138 0013 8000 -")
        #expect(oneLine("a\tb\nc") == "a b c")
    }
}
