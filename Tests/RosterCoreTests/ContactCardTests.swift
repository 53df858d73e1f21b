import RosterCore
import Testing

@Suite("Contact cards: uids, revisions, reading a put card, rewriting a sent one")
struct ContactCardTests {
    @Test func uidsAreOneTo255BytesWithoutControlCharactersOrSlashes() {
        #expect(ContactUID.isValid("roster-contact-7"))
        #expect(ContactUID.isValid("5C4B3E2D-1111-4A2B-9C3D-ABCDEF012345"))
        #expect(ContactUID.isValid(String(repeating: "é", count: 127)))
        #expect(!ContactUID.isValid(String(repeating: "é", count: 128)))
        #expect(!ContactUID.isValid(""))
        #expect(!ContactUID.isValid("a/b"))
        #expect(!ContactUID.isValid("a\u{7}b"))
        #expect(!ContactUID.isValid("a\nb"))
    }

    @Test func randomUIDsAreLowerCaseVersionFourUUIDs() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<100 {
            let uid = ContactUID.random(using: &generator)
            let parts = uid.split(separator: "-").map(\.count)
            #expect(parts == [8, 4, 4, 4, 12])
            #expect(uid == uid.lowercased())
            #expect(Array(uid)[14] == "4")
            #expect("89ab".contains(Array(uid)[19]))
        }
    }

    @Test func etagsAndTokensReadBackAndNothingElseReads() {
        for revision: Int64 in [0, 1, 42, 999_999_999_999_999_999] {
            #expect(ContactRevision.revision(etag: ContactRevision.etag(revision)) == revision)
            #expect(ContactRevision.revision(token: ContactRevision.token(revision)) == revision)
        }
        for bad in ["", "r", "ct1-", "ct1-01", "ct1--1", "ct1-1x", "ct2-1", "r1 ", "\"r1\"", "ct1-1000000000000000000",
                    "r٣", "ct1-+1"] {
            #expect(ContactRevision.revision(token: bad) == nil, "\(bad)")
            #expect(ContactRevision.revision(etag: bad) == nil || bad.hasPrefix("r") == false, "\(bad)")
        }
        #expect(ContactRevision.revision(etag: "ct1-5") == nil)
        #expect(ContactRevision.revision(token: "r5") == nil)
    }

    @Test func aPutCardIsReadAsAnImportReadsItWithItsOwnRules() {
        let good = "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ann\r\nitem1.TEL:+1 555\r\nUID:abc\r\nX-FOO:bar\r\nEND:VCARD\r\n"
        #expect(VCard.read(card: good) == .success(CardContent(draft: ContactDraft(name: "Ann", phone: "+1 555"), uid: "abc")))
        #expect(VCard.read(card: "BEGIN:VCARD\nVERSION:2.1\nFN:Ann\nEND:VCARD\n") == .failure(.unsupportedVersion))
        #expect(VCard.read(card: "BEGIN:VCARD\nFN:Ann\nEND:VCARD\n") == .failure(.unsupportedVersion))
        #expect(VCard.read(card: good + good) == .failure(.oneCardRequired))
        #expect(VCard.read(card: "") == .failure(.oneCardRequired))
        #expect(VCard.read(card: "BEGIN:VCARD\nVERSION:4.0\nEMAIL:a@example.com\nEND:VCARD\n")
                == .failure(CardError(.nameRequired)))
        #expect(VCard.read(card: "BEGIN:VCARD\nVERSION:4.0\nFN:Ann\n") == .failure(CardError(.missingEnd)))
        #expect(VCard.read(card: "BEGIN:VCARD\nVERSION:4.0\nFN:Ann\nnonsense\nEND:VCARD\n")
                == .failure(CardError(.malformedLine)))
        #expect(VCard.read(card: "BEGIN:VCARD\nVERSION:4.0\nFN:A\u{0}nn\nEND:VCARD\n") == .failure(.nulCharacter))
        let huge = "BEGIN:VCARD\nVERSION:4.0\nFN:Ann\nNOTE:" + String(repeating: "x", count: VCard.maxCardBytes) + "\nEND:VCARD\n"
        #expect(VCard.read(card: huge) == .failure(.tooLarge))
    }

    @Test func aRewriteChangesOnlyTheFieldsLinesAndKeepsGroupsParametersAndLineEndings() {
        let card = "BEGIN:VCARD\nVERSION:3.0\nN:Smith;Ann;;;\nFN:Ann Smith\nitem1.TEL;type=CELL:+1 555\n"
            + "TEL:+1 666\nX-LONG:abc\n def\nPHOTO;ENCODING=b:AAAA\nEND:VCARD\n"
        let before = ContactDraft(name: "Ann Smith", phone: "+1 555")
        let rewritten = VCard.rewritten(card, from: before,
                                        to: ContactDraft(name: "Ann Jones", phone: "+1 777", email: "ann@example.com"))
        #expect(rewritten == "BEGIN:VCARD\nVERSION:3.0\nN:Jones;Ann;;;\nFN:Ann Jones\nitem1.TEL;type=CELL:+1 777\n"
            + "TEL:+1 666\nX-LONG:abc\n def\nPHOTO;ENCODING=b:AAAA\nEMAIL:ann@example.com\nEND:VCARD\n")
        // Cleared fields lose their lines; a CRLF card keeps CRLF; the name did not change, so no N is added.
        let crlf = "BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Bo\r\nNOTE:old\r\nEMAIL:bo@example.com\r\nEND:VCARD\r\n"
        let cleared = VCard.rewritten(crlf, from: ContactDraft(name: "Bo", email: "bo@example.com", note: "old"),
                                      to: ContactDraft(name: "Bo"))
        #expect(cleared == "BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Bo\r\nEND:VCARD\r\n")
        #expect(VCard.read(card: VCard.rewritten(card, from: before, to: ContactDraft(name: "Ann Jones", phone: "+1 777")))
                == .success(CardContent(draft: ContactDraft(name: "Ann Jones", phone: "+1 777"), uid: nil)))
        // Nothing changed: the card as it was, byte for byte.
        #expect(VCard.rewritten(card, from: before, to: before) == card)
    }

    @Test func aNoteUpdateKeepsTheClientsStructuredNameAndItsOtherLines() {
        let card = "BEGIN:VCARD\r\nVERSION:3.0\r\nN:Trần;Bích;Thị;;\r\nFN:Trần Thị Bích\r\n"
            + "TEL;TYPE=WORK:+84 28 3822 1234 ext. 5\r\nEND:VCARD\r\n"
        let read = VCard.read(card: card)
        guard case .success(let content) = read else { return #expect(Bool(false), "\(read)") }
        var noted = content.draft
        noted.note = "đồng nghiệp"
        #expect(VCard.rewritten(card, from: content.draft, to: noted)
                == "BEGIN:VCARD\r\nVERSION:3.0\r\nN:Trần;Bích;Thị;;\r\nFN:Trần Thị Bích\r\n"
                + "TEL;TYPE=WORK:+84 28 3822 1234 ext. 5\r\nNOTE:đồng nghiệp\r\nEND:VCARD\r\n")
    }

    @Test func aClientsCardIsKeptWhenAFieldBreaksARosterRuleAndTheFieldIsLeftOut() {
        // What phones write: an extension, letters, a star code; an email no rule takes; a very long note.
        let card = "BEGIN:VCARD\nVERSION:4.0\nFN:Flowers\nTEL:1-800-FLOWERS\nEMAIL:not an email\nNOTE:"
            + String(repeating: "n", count: ContactRules.noteMaxLength + 10) + "\nUID:f1\nEND:VCARD\n"
        let read = VCard.read(card: card)
        guard case .success(let content) = read else { return #expect(Bool(false), "\(read)") }
        #expect(content.draft.name == "Flowers" && content.draft.phone == nil && content.draft.email == nil)
        #expect(content.draft.note?.count == ContactRules.noteMaxLength && content.uid == "f1")
        #expect((try? content.draft.validate()) != nil)
        let long = "BEGIN:VCARD\nVERSION:3.0\nFN:" + String(repeating: "a", count: ContactRules.nameMaxLength + 1)
            + "\nTEL:+1 555\nEND:VCARD\n"
        guard case .success(let named) = VCard.read(card: long) else { return #expect(Bool(false)) }
        #expect(named.draft.name.count == ContactRules.nameMaxLength && named.draft.phone == "+1 555")
        // An import still refuses such cards, with the import's reasons.
        #expect(VCard.parse(card).errors.map(\.reason) == ["invalid_phone"])
    }
}

private extension String {
    /// Without its CRLFs, so that any LF left shows.
    func replacingCRLFs() -> String { split(separator: "\r\n", omittingEmptySubsequences: false).joined() }
}
