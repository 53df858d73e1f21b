import Testing
@testable import RosterCore

@Suite("Contacts vCard")
struct ContactsVCardTests {
    @Test func serializesOneCard() {
        let contact = Contact(id: 7, draft: ContactDraft(name: "Alice Smith", phone: "+1 (555) 010-9999",
                                                         email: "alice@example.org", note: "a, b; c\\d\ne"),
                              createdAt: 0, updatedAt: 0)
        #expect(VCard.serialize([contact]) == """
            BEGIN:VCARD\r
            VERSION:4.0\r
            UID;VALUE=text:roster-contact-7\r
            FN:Alice Smith\r
            N:Smith;Alice;;;\r
            TEL;VALUE=text:+1 (555) 010-9999\r
            EMAIL:alice@example.org\r
            NOTE:a\\, b\\; c\\\\d\\ne\r
            END:VCARD\r

            """)
    }

    @Test func structuredNames() {
        func nLine(_ name: String) -> String? {
            VCard.serialize(drafts: [ContactDraft(name: name)]).components(separatedBy: "\r\n")
                .first { $0.hasPrefix("N:") }
        }
        #expect(nLine("Alice Smith") == "N:Smith;Alice;;;")
        #expect(nLine("Mary Jane Watson") == "N:Watson;Mary Jane;;;")
        #expect(nLine("Cher") == "N:Cher;;;;")
        #expect(nLine("张三") == "N:张三;;;;")
        #expect(nLine("김수현") == "N:김수현;;;;")
        #expect(nLine("Nguyễn Văn Ánh") == "N:Nguyễn;Văn Ánh;;;")
        #expect(nLine("Smith, Jr.") == "N:Jr.;Smith\\,;;;")
    }

    @Test func foldsAt75OctetsWithoutSplittingCharacters() throws {
        let note = String(repeating: "张", count: 100) + String(repeating: "é", count: 50) + "🙂x"
        let text = VCard.serialize(drafts: [ContactDraft(name: "N", note: note)])
        let lines = text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        for line in lines.dropLast() {
            #expect(line.last == UInt8(ascii: "\r"))
            #expect(line.count - 1 <= 75)
            // Each physical line is valid UTF-8 on its own.
            #expect(String(validating: line.dropLast(), as: UTF8.self) != nil)
        }
        #expect(lines.count > 6)
        #expect(VCard.parse(text).drafts == [ContactDraft(name: "N", note: note)])
    }

    @Test func parsesWhatOtherWritersProduce() {
        let text = """
            begin:vcard
            version:3.0
            item1.TEL;TYPE=cell;TYPE="voice,pref":+1 555 0100
            TEL;TYPE=work:+1 555 0199
            N:Smith;Alice;Q.;Dr.;
            Email;type=INTERNET:alice@example.org
            item2.X-ABLabel:_$!<Other>!$_
            NOTE:line one\\nline two\\, with comma and folded
              continuation
            end:vcard
            BEGIN:VCARD
            VERSION:4.0
            UID:urn:uuid:1234
            FN:张三
            TEL;VALUE=uri;TYPE=cell:tel:+86-10-1234-5678;ext=9
            N:张;三;;;
            END:VCARD
            BEGIN:VCARD
            N:김;수현;;;
            FN:
            END:VCARD
            """
        #expect(VCard.parse(text) == ContactImportResult(contacts: [
            ImportedContact(draft: ContactDraft(name: "Dr. Alice Q. Smith", phone: "+1 555 0100",
                                                email: "alice@example.org",
                                                note: "line one\nline two, with comma and folded continuation"),
                            line: 1),
            ImportedContact(draft: ContactDraft(name: "张三", phone: "+86-10-1234-5678"), uid: "urn:uuid:1234",
                            line: 11),
            ImportedContact(draft: ContactDraft(name: "김수현"), line: 18),
        ]))
    }

    @Test func rejectsBadCardsAndKeepsTheRest() {
        let text = [
            "stray 1", "stray 2",                                       // 1–2
            "BEGIN:VCARD", "VERSION:4.0", "TEL:555", "END:VCARD",       // 3–6: no name
            "BEGIN:VCARD", "FN:Good One", "END:VCARD",                  // 7–9
            "", "junk",                                                 // 10–11
            "BEGIN:VCARD", "FN:Bad Mail", "EMAIL:nope", "END:VCARD",    // 12–15
            "BEGIN:VCARD", "FN:Broken", "this line has no colon", "END:VCARD", // 16–19
            "BEGIN:VCARD", "FN:Unclosed",                               // 20–21
            "BEGIN:VCARD", "FN:Phone", "TEL:call me", "END:VCARD",      // 22–25
            "BEGIN:VCARD", "FN:Good Two", "END:VCARD",                  // 26–28
            "BEGIN:VCARD", "FN:Never ends",                             // 29–30
        ].joined(separator: "\r\n")
        #expect(VCard.parse(text) == ContactImportResult(
            contacts: [ImportedContact(draft: ContactDraft(name: "Good One"), line: 7),
                       ImportedContact(draft: ContactDraft(name: "Good Two"), line: 26)],
            errors: [
                ContactImportError(line: 1, reason: "unexpected_line"),
                ContactImportError(line: 3, reason: "name_required"),
                ContactImportError(line: 11, reason: "unexpected_line"),
                ContactImportError(line: 14, reason: "invalid_email"),
                ContactImportError(line: 18, reason: "malformed_line"),
                ContactImportError(line: 20, reason: "missing_end"),
                ContactImportError(line: 24, reason: "invalid_phone"),
                ContactImportError(line: 29, reason: "missing_end"),
            ]))
    }

    /// A parameter with no name once trapped the parser (an index out of range on an empty split), which
    /// took the daemon down with every connection. Such a line has no `name:` shape: its card is rejected as
    /// `malformed_line`, outside a card it is a stray line, and the cards around it are kept.
    @Test(arguments: ["X;:y", "NOTE;;TYPE=a:y", "NOTE;=:y"])
    func aParameterWithoutANameIsAMalformedLine(line: String) {
        #expect(VCardLine(Array(line.unicodeScalars), line: 1) == nil)
        let text = ["BEGIN:VCARD", "FN:Before", "END:VCARD",                 // 1–3
                    "BEGIN:VCARD", "FN:Broken", line, "END:VCARD",           // 4–7
                    line,                                                    // 8
                    "BEGIN:VCARD", "FN:After", "END:VCARD"].joined(separator: "\r\n")
        #expect(VCard.parse(text) == ContactImportResult(
            contacts: [ImportedContact(draft: ContactDraft(name: "Before"), line: 1),
                       ImportedContact(draft: ContactDraft(name: "After"), line: 9)],
            errors: [ContactImportError(line: 6, reason: "malformed_line"),
                     ContactImportError(line: 8, reason: "unexpected_line")]))
    }

    /// Parameters that do have a name still read as before: bare (vCard 2.1's `TEL;CELL:`), empty-valued,
    /// quoted with `;` inside, and a value holding `=`.
    @Test func parametersWithANameStillRead() throws {
        let bare = try #require(VCardLine(Array("TEL;CELL;TYPE=;X-A=\"a;b\";X-B=c=d:1".unicodeScalars), line: 1))
        #expect(bare.name == "TEL")
        #expect(bare.parameters == ["CELL": "", "TYPE": "", "X-A": "a;b", "X-B": "c=d"])
        #expect(bare.value == Array("1".unicodeScalars))
    }

    /// The same class of input as CSV's quadratic case (issue 12): one value folded over many physical lines,
    /// and many line breaks, all read into one note.
    @Test func manyFoldedLinesMakeOneValue() {
        let folded = String(repeating: "ab\\n\r\n ", count: 50_000)
        let text = "BEGIN:VCARD\r\nFN:A\r\nNOTE:" + folded + "\r\n" + String(repeating: "\n", count: 50_000) + "END:VCARD\r\n"
        let parsed = VCard.parse(text)
        #expect(parsed.contacts.isEmpty)
        #expect(parsed.errors == [ContactImportError(line: 3, reason: "note_too_long")])
        let short = "BEGIN:VCARD\r\nFN:A\r\nNOTE:" + String(repeating: "ab\\n\r\n ", count: 1_000) + "\r\nEND:VCARD\r\n"
        #expect(VCard.parse(short).drafts == [ContactDraft(name: "A", note: String(repeating: "ab\n", count: 1_000))])
    }

    @Test func emptyInputIsEmpty() {
        #expect(VCard.parse("") == ContactImportResult())
        #expect(VCard.parse("\u{FEFF}BEGIN:VCARD\nFN:A\nEND:VCARD\n").drafts == [ContactDraft(name: "A")])
    }

    @Test func roundTripsTrickyValues() {
        let drafts = ContactsRoundTrip.trickyDrafts
        let parsed = VCard.parse(VCard.serialize(drafts: drafts))
        #expect(parsed.errors == [])
        #expect(parsed.drafts == drafts)
        let contacts = drafts.enumerated().map { Contact(id: Int64($0.offset + 1), draft: $0.element,
                                                         createdAt: 0, updatedAt: 0) }
        let withUIDs = VCard.parse(VCard.serialize(contacts))
        #expect(withUIDs.contacts.map(\.uid) == contacts.map { VCard.uid(for: $0.id) })
        #expect(withUIDs.drafts == drafts)
    }
}

/// Values that break naive exporters, shared by the vCard and CSV round trips.
enum ContactsRoundTrip {
    static let trickyDrafts: [ContactDraft] = [
        ContactDraft(name: "Smith, Alice; \"Al\" \\ Jr.", phone: "+1 (555) 010-9999", email: "a.l+x@example.org",
                     note: "commas, semicolons; quotes \"\" and\nnew lines\n\nand a backslash \\n"),
        ContactDraft(name: "张三", phone: "010 1234", note: String(repeating: "张三李四，", count: 60)),
        ContactDraft(name: "김수현", note: String(repeating: "가", count: 299) + "🙂"),
        ContactDraft(name: "Nguyễn Văn Ánh", email: "anh@example.vn",
                     note: String(repeating: "Đặng Thu Thảo ", count: 22)),
        ContactDraft(name: "👩‍👩‍👧 Family", note: "e" + String(repeating: "\u{301}é🇻🇳", count: 100)),
        ContactDraft(name: "Only Name"),
        ContactDraft(name: "Leading,comma", note: ",\r,"),
    ]
}
