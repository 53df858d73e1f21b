import RosterCore
import Testing
@testable import RosterSQLite

/// What `ContactStore` does in SQL. Ownership, order, duplicates and pages behind the storage boundary are the
/// storage contract's, in `ContactContractTests`.
@Suite("Contacts in the store")
struct ContactStoreTests {
    private let keys = ContactSearchKeys(folded: "alice smith", initials: "as", pinyin: "", pinyinInitials: "",
                                        hangulInitials: "", phoneDigits: "5550100")

    private func twoUsers(_ database: Database) throws -> (Int64, Int64) {
        let users = UserStore(database: database)
        let hash = "$argon2id$v=19$m=8,t=1,p=1$c2FsdA$aGFzaA"
        let alice = try users.insertUser(canonical: "alice1", display: "alice1", email: nil, passwordHash: hash, createdAt: 1)
        let bob = try users.insertUser(canonical: "bobby1", display: "bobby1", email: nil, passwordHash: hash, createdAt: 1)
        return (alice.id, bob.id)
    }

    /// Issue 12: an import's duplicate check reads the rows of one folded name through an index, never the book.
    @Test func duplicatesAreFoundByExactFieldsThroughTheFoldedNameIndex() throws {
        let directory = try TemporaryDirectory()
        let database = try directory.rosterDatabase()
        let (alice, bob) = try twoUsers(database)
        let store = ContactStore(database: database)
        let draft = ContactDraft(name: "Ren\u{E9}e", phone: "555", note: "line one\nline two")
        let folded = ContactSearchKeys(draft: draft).folded
        _ = try store.insert(userID: alice, draft, keys: ContactSearchKeys(draft: draft), now: 1)
        #expect(try store.containsDuplicate(userID: alice, of: draft, folded: folded))
        // The same name in another normal form is the same name, as Swift compares it.
        let decomposed = ContactDraft(name: "Rene\u{301}e", phone: "555", note: "line one\nline two")
        #expect(try store.containsDuplicate(userID: alice, of: decomposed, folded: ContactSearchKeys(draft: decomposed).folded))
        #expect(try !store.containsDuplicate(userID: alice, of: ContactDraft(name: "Ren\u{E9}e", phone: "555"), folded: folded))
        #expect(try !store.containsDuplicate(userID: alice, of: ContactDraft(name: "RENÉE", phone: "555", note: "line one\nline two"),
                                             folded: folded))
        #expect(try !store.containsDuplicate(userID: bob, of: draft, folded: folded))
        let explain = try database.prepare("EXPLAIN QUERY PLAN SELECT id FROM contacts WHERE user_id = 1 AND key_folded = 'renee'")
        var plan = ""
        while try explain.step() { plan += explain.string(at: 3) ?? "" }
        #expect(plan.contains("contacts_user_folded"), "\(plan)")
    }

    @Test func anImportIsAllOrNothing() throws {
        let directory = try TemporaryDirectory()
        let database = try directory.rosterDatabase()
        let (alice, _) = try twoUsers(database)
        let store = ContactStore(database: database)
        let good = (ContactDraft(name: "Good"), keys)
        let bad = (ContactDraft(name: String(repeating: "x", count: 201)), keys)
        #expect(throws: StoreError.self) { try store.insertMany(userID: alice, [good, good, bad], now: 1) }
        #expect(try store.count(userID: alice) == 0)
        #expect(try store.insertMany(userID: alice, [good, good], now: 1).count == 2)
        #expect(try store.totalCount() == 2)
    }

    @Test func removingAUserRemovesTheirContacts() throws {
        let directory = try TemporaryDirectory()
        let database = try directory.rosterDatabase()
        let (alice, bob) = try twoUsers(database)
        let store = ContactStore(database: database)
        _ = try store.insert(userID: alice, ContactDraft(name: "A"), keys: keys, now: 1)
        _ = try store.insert(userID: bob, ContactDraft(name: "B"), keys: keys, now: 1)
        try database.execute("DELETE FROM users WHERE id = \(alice)")
        #expect(try store.count(userID: alice) == 0)
        #expect(try store.count(userID: bob) == 1)
    }
}
