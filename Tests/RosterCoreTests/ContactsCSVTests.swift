import Testing
@testable import RosterCore

@Suite("Contacts CSV")
struct ContactsCSVTests {
    @Test func serializesWithHeaderQuotingAndCRLF() {
        let drafts = [
            ContactDraft(name: "Alice Smith", phone: "+1 555", email: "a@b.co", note: nil),
            ContactDraft(name: "Smith, Bob", note: "said \"hi\"\nthen left"),
        ]
        #expect(ContactCSV.serialize(drafts: drafts) == """
            name,phone,email,note\r
            Alice Smith,+1 555,a@b.co,\r
            "Smith, Bob",,,"said ""hi""
            then left"\r

            """)
        #expect(ContactCSV.serialize(drafts: []) == "name,phone,email,note\r\n")
    }

    @Test func headerInAnyOrderWithUnknownColumns() {
        let text = "\u{FEFF}Note, EMAIL ,Company,NAME\nhello,a@b.co,Acme,Alice\n\n,,,Bob\n"
        #expect(ContactCSV.parse(text) == ContactImportResult(contacts: [
            ImportedContact(draft: ContactDraft(name: "Alice", email: "a@b.co", note: "hello"), line: 2),
            ImportedContact(draft: ContactDraft(name: "Bob"), line: 4),
        ]))
    }

    @Test func missingNameColumn() {
        #expect(ContactCSV.parse("phone,email\r\n555,a@b.co\r\n")
                == ContactImportResult(errors: [ContactImportError(line: 1, reason: "missing_name_column")]))
        #expect(ContactCSV.parse("")
                == ContactImportResult(errors: [ContactImportError(line: 1, reason: "missing_name_column")]))
        #expect(ContactCSV.parse("\n\nname\nA").contacts == [ImportedContact(draft: ContactDraft(name: "A"), line: 4)])
    }

    @Test func errorsCarryTheRecordsFirstLine() {
        let text = [
            "name,phone,email,note",                   // 1
            "\"Multi",                                 // 2: a record spanning lines 2–4
            "line\"\"name\",,,\"note",                 // 3
            "more\"",                                  // 4
            "Too,Few",                                 // 5
            ",555,,",                                  // 6: no name
            "Eve,call me,,",                           // 7
            "Mallory,,not-an-email,",                  // 8
            "\"Quoted\r\nCRLF\",,,",                   // 9–10
            "Trent,,,\"never closed",                  // 11
            "ignored,,,",                              // 12
        ].joined(separator: "\r\n")
        #expect(ContactCSV.parse(text) == ContactImportResult(
            contacts: [
                ImportedContact(draft: ContactDraft(name: "Multi\r\nline\"name", note: "note\r\nmore"), line: 2),
                ImportedContact(draft: ContactDraft(name: "Quoted\r\nCRLF"), line: 9),
            ],
            errors: [
                ContactImportError(line: 5, reason: "wrong_field_count"),
                ContactImportError(line: 6, reason: "name_required"),
                ContactImportError(line: 7, reason: "invalid_phone"),
                ContactImportError(line: 8, reason: "invalid_email"),
                ContactImportError(line: 11, reason: "unterminated_quote"),
            ]))
    }

    @Test func lenientQuotes() {
        #expect(ContactCSV.parse("name,note\nab\"c,\"x\"y\n").drafts == [ContactDraft(name: "ab\"c", note: "xy")])
    }

    @Test func roundTripsTrickyValues() {
        let drafts = ContactsRoundTrip.trickyDrafts
        let parsed = ContactCSV.parse(ContactCSV.serialize(drafts: drafts))
        #expect(parsed.errors == [])
        #expect(parsed.drafts == drafts)
    }

    /// Issue 12: line breaks inside quotes made the reader quadratic (4 MB took 177 s). Its speed is measured
    /// by roster-bench's `parse` scenario and tools/instructions-per-parse.sh; this pins what it reads from
    /// such a file: every break kept as written, and the lines after it still numbered right.
    @Test func manyLineBreaksInsideQuotesAreKeptAndCounted() {
        let breaks = String(repeating: "\n", count: 100_000) + String(repeating: "\r\n", count: 100_000)
            + String(repeating: "\r", count: 100_000)
        let text = "name,note\r\n\"Ann" + breaks + "\",\"say \"\"" + breaks + "\"\"\"\r\nBob,x\r\n"
        let (records, unterminated) = CSVRecords.read(text)
        #expect(unterminated == nil)
        #expect(records.map(\.fields) == [["name", "note"], ["Ann" + breaks, "say \"" + breaks + "\""], ["Bob", "x"]])
        #expect(records.map(\.line) == [1, 2, 2 + 2 * 300_000 + 1])
    }

    @Test func multiByteTextAroundDelimitersIsKeptWhole() {
        let text = "\u{FEFF}name,note\n\"张三, \"\"ㄱ\"\"\",é\u{301}🙂\n"
        #expect(CSVRecords.read(text).records.map(\.fields) == [["name", "note"], ["张三, \"ㄱ\"", "é\u{301}🙂"]])
    }
}
