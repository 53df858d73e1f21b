import RosterCore
import RosterRuntime
import RosterStorage
import Testing

/// Contacts: only the owner's id reaches a contact, one user's writes complete in the order they were made,
/// imports skip exact duplicates, and exports page through a sink in id order.
@Suite("Storage contract: contacts")
struct ContactContractTests {
    @Test(arguments: BackendKind.allCases)
    func anotherUsersIdReadsAsMissing(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let alice = try backend.account("alice1").id
        let bob = try backend.account("bobby1").id
        let added = try backend.value {
            storage.acting(for: charge(alice)).addContact(ContactDraft(name: "Alice Smith", phone: "555-0100"),
                                                          for: alice, completion: $0)
        }
        #expect(added.contact.name == "Alice Smith")
        #expect(added.contact.createdAt == backend.clock.nowMs())
        #expect(added.keys == ContactSearchKeys(draft: ContactDraft(name: "Alice Smith", phone: "555-0100")))
        let id = added.contact.id
        let patch = ContactPatch(name: "Mallory", phone: nil, email: nil, note: nil)

        #expect(try backend.value { storage.acting(for: charge(bob)).updateContact(id, of: bob, with: patch,
                completion: $0) }
                == .notFound)
        #expect(try !backend.value { storage.acting(for: charge(bob)).removeContact(id, of: bob, completion: $0) })
        #expect(try read([id], of: bob, backend) == [])
        #expect(try index(of: bob, backend).isEmpty)
        #expect(try export(of: bob, backend).contacts == [])
        // Alice's contact is as she left it.
        #expect(try read([id], of: alice, backend) == [added.contact])
        #expect(try index(of: alice, backend).map(\.id) == [id])
    }

    @Test(arguments: BackendKind.allCases)
    func anUpdateBuildsOnTheContactAsItStandsAndKeepsItsCreationTime(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let carol = try backend.account("carol1").id
        let added = try backend.value {
            storage.acting(for: charge(carol)).addContact(ContactDraft(name: "Dan", phone: "1", email: "dan@example.com"),
                                                          for: carol, completion: $0)
        }
        backend.clock.advance(byMs: 500)
        var answers: [Result<ContactUpdate, StorageFailure>] = []
        // Pipelined: the second builds on the first.
        for patch in [ContactPatch(name: nil, phone: "2", email: nil, note: "met at work"),
                      ContactPatch(name: "Daniel", phone: nil, email: "", note: nil)] {
            storage.acting(for: charge(carol)).updateContact(added.contact.id, of: carol, with: patch,
                                                             completion: backend.completion { answers.append($0) })
        }
        try backend.run(until: { answers.count == 2 })
        guard case .success(.updated(let last)) = answers.last, case .success(.updated) = answers.first else {
            Issue.record("\(answers)")
            return
        }
        #expect(last.contact.draft == ContactDraft(name: "Daniel", phone: "2", email: nil, note: "met at work"))
        #expect(last.contact.createdAt == added.contact.createdAt)
        #expect(last.contact.updatedAt == added.contact.createdAt + 500)
        #expect(last.keys == ContactSearchKeys(draft: last.contact.draft))
        #expect(try read([added.contact.id], of: carol, backend) == [last.contact])

        let invalid = try backend.value {
            storage.acting(for: charge(carol)).updateContact(added.contact.id, of: carol,
                                                             with: ContactPatch(name: "", phone: nil, email: nil, note: nil),
                                                             completion: $0)
        }
        #expect(invalid == .invalid(.invalidName(.required)))
        #expect(try read([added.contact.id], of: carol, backend) == [last.contact])
    }

    @Test(arguments: BackendKind.allCases)
    func oneUsersWritesCompleteInTheOrderTheyWereMade(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let dave = try backend.account("dave01").id
        var events: [String] = []
        var ids: [Int64] = []
        for index in 0..<20 {
            storage.acting(for: charge(dave)).addContact(ContactDraft(name: "Friend \(index)"), for: dave,
                                                         completion: backend.completion { result in
                                                             let id = (try? result.get().contact.id) ?? -1
                                                             ids.append(id)
                                                             events.append("add \(index)")
                                                         })
        }
        try backend.run(until: { events.count == 20 })
        #expect(events == (0..<20).map { "add \($0)" })
        #expect(ids == ids.sorted() && Set(ids).count == 20)
        // An update and a remove of one contact, an import and an export, pipelined: answered as issued.
        let eve = try backend.value { storage.acting(for: charge(dave)).addContact(ContactDraft(name: "Eve"), for: dave,
                completion: $0) }.contact.id
        events = []
        storage.acting(for: charge(dave)).updateContact(eve, of: dave, with: ContactPatch(name: nil, phone: nil, email: nil, note: "x"),
                                                        completion: backend.completion { result in
                                                            guard case .success(.updated) = result else { return events.append("update failed") }
                                                            events.append("update")
                                                        })
        storage.acting(for: charge(dave)).removeContact(eve, of: dave, completion: backend.completion { removed in
                                      events.append("remove \((try? removed.get()) ?? false)")
                                  })
        storage.acting(for: charge(dave)).importContacts("name\nImported\n", format: .csv, for: dave,
                                                         completion: backend.completion { _ in events.append("import") })
        storage.acting(for: charge(dave)).exportContacts(of: dave, after: 0, into: CollectingSink(limit: 100),
                                                         cancelled: Locked(false), completion: backend.completion { result in
                                                             events.append("export \((try? result.get().contacts.count) ?? -1)")
                                                         })
        try backend.run(until: { events.count == 4 })
        // The export sees the twenty and the import, and not Eve, removed before it.
        #expect(events == ["update", "remove true", "import", "export 21"])
        // An index load keeps that order too: it holds exactly the writes answered before it.
        let before = try read(ids: dave, backend)
        let fay = try backend.value { storage.acting(for: charge(dave)).addContact(ContactDraft(name: "Fay"), for: dave,
                completion: $0) }.contact.id
        events = []
        var loaded: [Int64] = []
        storage.acting(for: charge(dave)).removeContact(fay, of: dave,
                                                        completion: backend.completion { _ in events.append("remove") })
        storage.acting(for: charge(dave)).loadSearchIndex(of: dave, build: { $0.map(\.id) }, completion: backend.completion { result in
                                      loaded = (try? result.get()) ?? []
                                      events.append("index")
                                  })
        storage.acting(for: charge(dave)).addContact(ContactDraft(name: "Gus"), for: dave,
                                                     completion: backend.completion { _ in events.append("add") })
        try backend.run(until: { events.count == 3 })
        #expect(events == ["remove", "index", "add"])
        #expect(loaded == before)
    }

    @Test(arguments: BackendKind.allCases)
    func anImportSkipsExactDuplicatesOfTheBookAndOfItself(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let erin = try backend.account("erin01").id
        let other = try backend.account("frank1").id
        _ = try backend.value { storage.acting(for: charge(erin)).addContact(ContactDraft(name: "Ren\u{E9}e", phone: "555"),
                                                                             for: erin, completion: $0) }
        _ = try backend.value { storage.acting(for: charge(other)).addContact(ContactDraft(name: "Zed"), for: other,
                                                                              completion: $0) }
        let csv = """
            name,phone,email,note
            Rene\u{301}e,555,,
            Renée,556,,
            RENÉE,555,,
            Zed,,,
            Zed,,,
            ,,,no name
            """
        let outcome = try backend.value {
            storage.acting(for: charge(erin, bytes: csv.utf8.count)).importContacts(csv, format: .csv, for: erin,
                    completion: $0)
        }
        // The decomposed Renée is the stored one; another user's Zed is no duplicate, but the file's second one is.
        #expect(outcome.added.map(\.contact.draft) == [ContactDraft(name: "Renée", phone: "556"),
                                                      ContactDraft(name: "RENÉE", phone: "555"), ContactDraft(name: "Zed")])
        #expect(outcome.added.map(\.keys) == outcome.added.map { ContactSearchKeys(draft: $0.contact.draft) })
        #expect(outcome.skipped == 2)
        #expect(outcome.errors.map(\.line) == [7])
        #expect(try index(of: erin, backend).map(\.id) == read(ids: erin, backend))
        let again = try backend.value { storage.acting(for: charge(erin)).importContacts(csv, format: .csv, for: erin,
                completion: $0) }
        #expect(again.added == [])
        #expect(again.skipped == 5)
    }

    @Test(arguments: BackendKind.allCases)
    func anExportPagesThroughTheSinkInIdOrder(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let gina = try backend.account("gina01").id
        let ids = try (0..<7).map { index in
            try backend.value { storage.acting(for: charge(gina)).addContact(ContactDraft(name: "Contact \(index)"),
                                                                             for: gina, completion: $0) }.contact.id
        }
        var pages: [[Int64]] = []
        var after: Int64 = 0
        while true {
            let page = try export(of: gina, backend, after: after, limit: 3)
            pages.append(page.contacts.map(\.id))
            guard page.more, let last = page.contacts.last else { break }
            after = last.id
        }
        #expect(pages == [Array(ids[0..<3]), Array(ids[3..<6]), [ids[6]]])
        // A page that takes everything there is says so.
        let whole = try export(of: gina, backend, limit: 7)
        #expect(whole.contacts.map(\.id) == ids)
        #expect(!whole.more)
    }

    @Test(arguments: BackendKind.allCases)
    func aReadOrExportCancelledBeforeItStartsIsSkipped(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let hana = try backend.account("hana01").id
        let id = try backend.value { storage.acting(for: charge(hana)).addContact(ContactDraft(name: "Ida"), for: hana,
                completion: $0) }.contact.id
        let gone = Locked(true)
        #expect(try backend.answer {
            storage.acting(for: charge(hana)).readContacts([id], of: hana, cancelled: gone, encode: { $0.count },
                                                           completion: $0)
        } == .failure(.busy(retryAfterMs: 0)))
        #expect(try backend.answer {
            storage.acting(for: charge(hana)).exportContacts(of: hana, after: 0, into: CollectingSink(limit: 10),
                                                             cancelled: gone, completion: $0)
        }.map(\.contacts) == .failure(.busy(retryAfterMs: 0)))
    }

    @Test(arguments: BackendKind.allCases)
    func readsKeepTheOrderAskedForAndLeaveOutWhatIsGone(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let ivan = try backend.account("ivan01").id
        let ids = try ["A", "B", "C"].map { name in
            try backend.value { storage.acting(for: charge(ivan)).addContact(ContactDraft(name: name), for: ivan,
                                                                             completion: $0) }.contact.id
        }
        #expect(try backend.value { storage.acting(for: charge(ivan)).removeContact(ids[1], of: ivan, completion: $0) })
        #expect(try read([ids[2], ids[1], ids[0], 12_345], of: ivan, backend).map(\.name) == ["C", "A"])
        let entries = try index(of: ivan, backend)
        #expect(entries.map(\.id) == [ids[0], ids[2]])
        #expect(entries.map(\.keys) == [ContactSearchKeys(draft: ContactDraft(name: "A")),
                                        ContactSearchKeys(draft: ContactDraft(name: "C"))])
        let reopened = try backend.reopened()
        #expect(try backend.value { reopened.acting(for: charge(ivan)).readContacts(ids, of: ivan,
                cancelled: Locked(false), encode: { $0.map(\.name) }, completion: $0) } == ["A", "C"])
    }

    // MARK: Helpers

    private func read(_ ids: [Int64], of user: AccountID, _ backend: Backend) throws -> [Contact] {
        try backend.value {
            backend.storage.acting(for: charge(user)).readContacts(ids, of: user, cancelled: Locked(false),
                                                                   encode: { $0 }, completion: $0)
        }
    }

    /// The ids of a user's contacts, in id order, through an export.
    private func read(ids user: AccountID, _ backend: Backend) throws -> [Int64] {
        try export(of: user, backend).contacts.map(\.id)
    }

    private func index(of user: AccountID, _ backend: Backend) throws -> [ContactIndexEntry] {
        try backend.value {
            backend.storage.acting(for: charge(user)).loadSearchIndex(of: user,
                                                                      build: { $0.map { IndexRow(id: $0.id, keys: $0.keys) } },
                                                                      completion: $0)
        }.map { (id: $0.id, keys: $0.keys) }
    }

    private func export(of user: AccountID, _ backend: Backend, after: Int64 = 0,
                        limit: Int = 1_000) throws -> CollectingSink.Page {
        try backend.value {
            backend.storage.acting(for: charge(user)).exportContacts(of: user, after: after,
                                                                     into: CollectingSink(limit: limit),
                                                                     cancelled: Locked(false), completion: $0)
        }
    }
}

/// A search index row as a Sendable value (the protocol's entry is a tuple).
private struct IndexRow: Sendable {
    let id: Int64
    let keys: ContactSearchKeys
}

/// A sink that takes up to `limit` contacts.
struct CollectingSink: ContactExportSink {
    struct Page: Equatable, Sendable {
        var contacts: [Contact]
        var more: Bool
    }

    let limit: Int
    private var contacts: [Contact] = []

    init(limit: Int) { self.limit = limit }

    mutating func add(_ contact: Contact) -> Bool {
        guard contacts.count < limit else { return false }
        contacts.append(contact)
        return true
    }

    mutating func finish(more: Bool) -> Page { Page(contacts: contacts, more: more) }
}
