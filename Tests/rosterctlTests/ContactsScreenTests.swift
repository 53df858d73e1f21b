import RosterProtocol
import Testing
@testable import rosterctl

let contactsSnapshot: JSONValue = [
    "form": "contacts",
    "fields": [["name": "query", "enabled": true, "state": "empty", "code": "empty",
                "message": "Search by name, initials, pinyin or phone", "rev": 0]],
    "submittable": false,
]

func contactJSON(_ id: Int, _ name: String, phone: String? = nil) -> JSONValue {
    ["id": .int(id), "name": .string(name), "phone": .optional(phone), "email": nil, "note": nil,
     "created_at": 1, "updated_at": 1]
}

func resultsEvent(_ query: String, _ items: [JSONValue], total: Int? = nil) -> JSONValue {
    ["type": "results", "form": "contacts", "query": .string(query), "items": .array(items), "total": .int(total ?? items.count)]
}

let alice = contactJSON(1, "Alice Smith", phone: "+1 (555) 010-9999")
let alan = contactJSON(2, "Alan Turing")
let bob = contactJSON(3, "Bob Jones")

@Suite("contact search screen")
struct ContactsScreenTests {
    /// A lock, a deletion or a log-out elsewhere ends the session under the screen: it must end, not go on
    /// showing a list it will never refresh. A session event naming a user (a resume) changes nothing.
    @Test func theEndOfTheSessionEndsTheScreen() {
        for ending: JSONValue in [["type": "session", "user": nil],
                                  ["type": "form", "form": "contacts", "submittable": false, "closed": true]] {
            var screen = ContactsScreen(snapshot: contactsSnapshot)
            screen.apply(event: resultsEvent("", [alice]))
            screen.apply(event: ["type": "session", "user": "alice1"])
            screen.apply(event: ["type": "form", "form": "register", "submittable": false, "closed": true])
            #expect(!screen.sessionEnded)
            screen.apply(event: ending)
            #expect(screen.sessionEnded, "\(ending)")
        }
    }

    @Test func typingSendsTheWholeQueryEachTime() {
        var screen = ContactsScreen(snapshot: contactsSnapshot)
        #expect(screen.placeholder == "Search by name, initials, pinyin or phone")
        #expect("al".flatMap { screen.handle(.text($0)) } == [.input("a"), .input("al")])
        #expect(screen.handle(.left) == [])
        #expect(screen.handle(.killToStart) == [.input("l")])
    }

    @Test func resultsReplaceTheListAndTellWhetherTheyAreCurrent() {
        var screen = ContactsScreen(snapshot: contactsSnapshot)
        #expect(screen.resultsQuery == nil)
        screen.apply(event: resultsEvent("", [alan, alice, bob]))
        #expect(screen.items.map(\.name) == ["Alan Turing", "Alice Smith", "Bob Jones"])
        #expect(screen.isCurrent)
        _ = screen.handle(.text("a"))
        #expect(!screen.isCurrent)
        screen.apply(event: resultsEvent("a", [alan, alice], total: 2))
        #expect(screen.isCurrent)
        #expect(screen.total == 2)
        screen.apply(event: ["type": "field", "form": "contacts"])
        screen.apply(event: resultsEvent("x", [], total: 0).replacingForm("register"))
        #expect(screen.items.count == 2)
    }

    @Test func arrowsMoveWithinTheListAndEnterChoosesTheSelected() throws {
        var screen = ContactsScreen(snapshot: contactsSnapshot)
        #expect(screen.handle(.enter) == [])
        #expect(screen.handle(.down) == [])
        #expect(screen.selected == 0)
        screen.apply(event: resultsEvent("", [alan, alice, bob]))
        _ = screen.handle(.down)
        _ = screen.handle(.down)
        _ = screen.handle(.down)
        #expect(screen.selected == 2)
        _ = screen.handle(.up)
        let chosen = try #require(ContactRecord(alice))
        #expect(screen.handle(.enter) == [.choose(chosen)])
    }

    @Test func aNewQueryStartsAtTheBestMatchAndFreshResultsKeepTheSelection() {
        var screen = ContactsScreen(snapshot: contactsSnapshot)
        screen.apply(event: resultsEvent("", [alan, alice, bob]))
        _ = screen.handle(.down)
        _ = screen.handle(.down)
        // The same query again (a contact was added elsewhere): Bob stays selected.
        screen.apply(event: resultsEvent("", [contactJSON(4, "Aaron"), alan, alice, bob]))
        #expect(screen.selectedContact?.name == "Bob Jones")
        _ = screen.handle(.text("a"))
        screen.apply(event: resultsEvent("a", [alan, alice]))
        #expect(screen.selected == 0)
        // A shorter list than the selection never leaves it past the end.
        _ = screen.handle(.down)
        screen.apply(event: resultsEvent("a", [alan]))
        #expect(screen.selected == 0)
    }

    @Test func escapeCtrlCAndCtrlDOnAnEmptyQueryCancel() {
        var screen = ContactsScreen(snapshot: contactsSnapshot)
        #expect(screen.handle(.escape) == [.cancel])
        #expect(screen.handle(.interrupt) == [.cancel])
        #expect(screen.handle(.endOfInput) == [.cancel])
        _ = screen.handle(.text("a"))
        #expect(screen.handle(.endOfInput) == [])
        #expect(screen.handle(.redraw) == [.redraw])
    }

    @Test func aChosenContactPrintsEveryFieldItHas() throws {
        let contact = try #require(ContactRecord(["id": 4, "name": "Alice Smith", "phone": "+1 555", "email": nil, "note": "a\nb"]))
        #expect(contact.detail == ["ID:    4", "Name:  Alice Smith", "Phone: +1 555", "Note:  a\n       b"])
    }
}

@Suite("contact highlighting")
struct ContactHighlightTests {
    @Test func theFoldedQueryIsFoundInTheNamePreferringAWordStart() {
        #expect(ContactHighlight.name("Alice Smith", query: "ali") == [0..<3])
        #expect(ContactHighlight.name("Alice Smith", query: "SMI") == [6..<9])
        #expect(ContactHighlight.name("Hanna Anders", query: "an") == [6..<8])
        #expect(ContactHighlight.name("Hanna Anders", query: "nn") == [2..<4])
        #expect(ContactHighlight.name("Nguyễn Văn Ánh", query: "nguyen van a") == [0..<12])
        #expect(ContactHighlight.name("Đặng Thu", query: "dang") == [0..<4])
        #expect(ContactHighlight.name("ＡＬＩＣＥ", query: "al") == [0..<2])
        #expect(ContactHighlight.name("Alice   Smith", query: "e s") == [4..<9])
        #expect(ContactHighlight.name("张三", query: "张") == [0..<1])
        #expect(ContactHighlight.name("김수현", query: "김수") == [0..<2])
    }

    @Test func initialsHighlightTheFirstLetterOfEachWord() {
        #expect(ContactHighlight.name("Alice Smith", query: "as") == [0..<1, 6..<7])
        #expect(ContactHighlight.name("Nguyễn Văn Ánh", query: "nva") == [0..<1, 7..<8, 11..<12])
    }

    @Test func matchesWithNothingVisibleHighlightNothing() {
        #expect(ContactHighlight.name("张三", query: "zs") == [])
        #expect(ContactHighlight.name("김수현", query: "ㄱㅅ") == [])
        #expect(ContactHighlight.name("Alice Smith", query: "") == [])
        #expect(ContactHighlight.name("Alice Smith", query: "xyz") == [])
    }

    @Test func phoneDigitsAreFoundAcrossSeparators() {
        #expect(ContactHighlight.phone("+1 (555) 010-9999", query: "555010") == [4..<5, 5..<6, 6..<7, 9..<10, 10..<11, 11..<12])
        #expect(ContactHighlight.phone("+1 (555) 010-9999", query: "010-99") == [9..<10, 10..<11, 11..<12, 13..<14, 14..<15])
        #expect(ContactHighlight.phone("+1 (555) 010-9999", query: "ali") == [])
        #expect(ContactHighlight.phone("+1 (555) 010-9999", query: "a5") == [])
        #expect(ContactHighlight.phone("+1 (555) 010-9999", query: "777") == [])
    }
}

@Suite("contact search renderer")
struct ContactsRendererTests {
    private let renderer = ContactsRenderer(text: .forLocale("en"), rows: 12, columns: 80)

    private func screen(query: String, _ items: [JSONValue], total: Int? = nil) -> ContactsScreen {
        var screen = ContactsScreen(snapshot: contactsSnapshot)
        for character in query { _ = screen.handle(.text(character)) }
        screen.apply(event: resultsEvent(query, items, total: total))
        return screen
    }

    @Test func theSearchLineCarriesTheQueryAndTheCount() {
        let frame = renderer.frame(screen(query: "al", [alan, alice], total: 2))
        #expect(frame.text[0].hasPrefix("› Search  [al "))
        #expect(frame.text[0].hasSuffix("]  2/2"))
        #expect(frame.cursor?.row == 0)
        #expect(frame.cursor?.column == 13)
        #expect(frame.text[2].hasPrefix("  NAME "))
        #expect(frame.text[3].hasPrefix("› Alan Turing"))
        #expect(frame.text[4].hasPrefix("  Alice Smith"))
        #expect(frame.text.last == " ↑↓ select · Enter print · Esc cancel")
        #expect(frame.lines.count == 12)
    }

    @Test func theMatchedPartIsItsOwnRun() {
        let frame = renderer.frame(screen(query: "ali", [alice]))
        let runs = frame.lines[3]
        #expect(runs[1] == FormRenderer.Run(text: "Ali", look: Style.Attributes(colour: .yellow, bold: true, reverse: true)))
        #expect(runs[2].text.hasPrefix("ce Smith"))
        #expect(runs[2].look == Style.Attributes(reverse: true))
    }

    @Test func staleResultsAndEmptyResultsSaySo() {
        var stale = screen(query: "al", [alan, alice])
        _ = stale.handle(.text("i"))
        #expect(renderer.frame(stale).text[0].hasSuffix("]  … 2/2"))
        #expect(renderer.frame(screen(query: "zz", [])).text[3] == "  No contacts match")
        let waiting = ContactsScreen(snapshot: contactsSnapshot)
        let frame = renderer.frame(waiting)
        #expect(frame.text[0].contains("[Search by name"))
        #expect(frame.text[3] == "  Searching…")
    }

    @Test func theListScrollsToKeepTheSelectionInView() {
        var screen = screen(query: "", (1...20).map { contactJSON($0, "Person \($0)") })
        for _ in 0..<15 { _ = screen.handle(.down) }
        let text = renderer.frame(screen).text
        // 12 rows leave 8 for results; the selected 16th is the last of them.
        #expect(text[10].hasPrefix("› Person 16"))
        #expect(text[3].hasPrefix("  Person 9"))
    }

    @Test func longCellsAreCutWithAnEllipsisAndTheFrameFitsANarrowTerminal() {
        let narrow = ContactsRenderer(text: .forLocale("en"), rows: 8, columns: 30)
        let frame = narrow.frame(screen(query: "", [contactJSON(1, "Bartholomew Fitzgerald-Smythe the Third", phone: "+44 20 7946 0958")]))
        #expect(frame.text.allSatisfy { displayWidth($0) <= 30 })
        #expect(frame.text[3].contains("Bartholomew…"))
    }
}

extension JSONValue {
    func replacingForm(_ form: String) -> JSONValue {
        guard case .object(let members) = self else { return self }
        return .object(members.map { $0.0 == "form" ? ($0.0, .string(form)) : $0 })
    }
}
