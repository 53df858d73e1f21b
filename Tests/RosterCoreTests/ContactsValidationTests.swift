import Testing
@testable import RosterCore

@Suite("Contact validation")
struct ContactsValidationTests {
    private func reason(_ draft: ContactDraft) -> String? {
        do {
            try draft.validate()
            return nil
        } catch {
            return error.reason
        }
    }

    @Test func reasonsAndFields() {
        #expect(reason(ContactDraft(name: "  \n ")) == "name_required")
        #expect(reason(ContactDraft(name: String(repeating: "a", count: 201))) == "name_too_long")
        #expect(reason(ContactDraft(name: String(repeating: "张", count: 200))) == nil)
        #expect(reason(ContactDraft(name: "A", phone: "555-0100 ext 7")) == "invalid_phone")
        #expect(reason(ContactDraft(name: "A", phone: "+-() ")) == "invalid_phone")
        #expect(reason(ContactDraft(name: "A", phone: String(repeating: "1", count: 65))) == "invalid_phone")
        #expect(reason(ContactDraft(name: "A", phone: String(repeating: "1", count: 64))) == nil)
        #expect(reason(ContactDraft(name: "A", phone: "+1 (555) 010-9999")) == nil)
        #expect(reason(ContactDraft(name: "A", phone: "０１０-１２３４")) == nil)
        #expect(reason(ContactDraft(name: "A", email: "bob@example")) == "invalid_email")
        #expect(reason(ContactDraft(name: "A", email: "bob@example.org")) == nil)
        #expect(reason(ContactDraft(name: "A", note: String(repeating: "n", count: 4_001))) == "note_too_long")
        #expect(reason(ContactDraft(name: "A", note: String(repeating: "n", count: 4_000))) == nil)
        // The first failing field in form order wins.
        #expect(reason(ContactDraft(name: "", phone: "x", email: "y")) == "name_required")
        #expect(ContactError.invalidPhone.field == "phone")
        #expect(ContactError.invalidName(.tooLong).rosterError == .invalidField(field: "name", code: "name_too_long"))
        #expect(ContactError.noteTooLong.rosterError.reason == "note_too_long")
    }

    @Test func emptyOptionalsAreNoneAndNamesAreTrimmed() {
        #expect(ContactDraft(name: " Alice Smith\n", phone: "", email: "", note: "")
                == ContactDraft(name: "Alice Smith", phone: nil, email: nil, note: nil))
        #expect(ContactDraft(name: "A", note: "one\r\ntwo\rthree\n").note == "one\ntwo\nthree\n")
        #expect(ContactDraft(name: "A", phone: " 555 ").phone == " 555 ")
    }

    @Test func contactCarriesItsDraft() {
        let draft = ContactDraft(name: "Alice", phone: "1", email: "a@b.co", note: "n")
        let contact = Contact(id: 7, draft: draft, createdAt: 1_000, updatedAt: 2_000)
        #expect(contact.draft == draft)
        #expect(contact.id == 7 && contact.createdAt == 1_000 && contact.updatedAt == 2_000)
    }
}
