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
        let rewritten = VCard.rewritten(card, with: ContactDraft(name: "Ann Jones", phone: "+1 777", email: "ann@example.com"))
        #expect(rewritten == "BEGIN:VCARD\nVERSION:3.0\nN:Jones;Ann;;;\nFN:Ann Jones\nitem1.TEL;type=CELL:+1 777\n"
            + "TEL:+1 666\nX-LONG:abc\n def\nPHOTO;ENCODING=b:AAAA\nEMAIL:ann@example.com\nEND:VCARD\n")
        // Cleared fields lose their lines; a CRLF card keeps CRLF.
        let crlf = "BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Bo\r\nNOTE:old\r\nEMAIL:bo@example.com\r\nEND:VCARD\r\n"
        let cleared = VCard.rewritten(crlf, with: ContactDraft(name: "Bo"))
        #expect(cleared.hasPrefix("BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Bo\r\nN:") && cleared.hasSuffix("\r\nEND:VCARD\r\n"))
        #expect(!cleared.replacingCRLFs().contains("\n"))
        #expect(!cleared.contains("NOTE") && !cleared.contains("EMAIL"))
        #expect(VCard.read(card: VCard.rewritten(card, with: ContactDraft(name: "Ann Jones", phone: "+1 777")))
                == .success(CardContent(draft: ContactDraft(name: "Ann Jones", phone: "+1 777"), uid: nil)))
    }
}

private extension String {
    /// Without its CRLFs, so that any LF left shows.
    func replacingCRLFs() -> String { split(separator: "\r\n", omittingEmptySubsequences: false).joined() }
}
