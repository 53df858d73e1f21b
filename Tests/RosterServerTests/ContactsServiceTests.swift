import RosterCore
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Testing
@testable import RosterServer

/// The answers a call got, in order: each call must get exactly one.
final class Answers<T> {
    private(set) var all: [Result<T, RosterError>] = []

    var completion: (Result<T, RosterError>) -> Void { { self.all.append($0) } }

    var errors: [RosterError] { all.compactMap { if case .failure(let error) = $0 { error } else { nil } } }
    var values: [T] { all.compactMap { try? $0.get() } }
}

/// Storage with accounts to own contacts, and a service over it.
final class ContactsFixture {
    let storage = InMemoryStorage()
    let service: ContactsService
    /// The users `onChange` was called for, in order.
    private(set) var changed: [AccountID] = []
    let charge = QueueCharge(payer: .daemon, connection: 1)

    /// In front of `storage` when asked for (see `InterposedStorage`).
    let interposed: InterposedStorage?

    /// With `holdingLoads` the service talks to an `InterposedStorage` that does (or does not) hold index loads.
    init(holdingLoads: Bool? = nil) {
        let inner = storage
        let interposed = holdingLoads.map { InterposedStorage(inner, holdsLoads: $0) }
        self.interposed = interposed
        service = if let interposed { ContactsService(contacts: BoundStorage { interposed.acting(for: $0) }) }
                  else { ContactsService(storage: inner) }
        service.onChange = { [unowned self] in self.changed.append($0) }
    }

    /// A new account, made at once whatever `storage.answering` says.
    func account(_ name: String) -> AccountID {
        let answering = storage.answering
        storage.answering = .immediately
        defer { storage.answering = answering }
        var id: AccountID = -1
        storage.acting(for: .daemon).createAccount(NewAccount(username: name, display: name, email: nil, passwordHash: "$argon2id$v=19$test")) { id = (try? $0.get().id) ?? -1 }
        return id
    }

    /// Contacts stored straight into the storage, past the service (as another daemon would).
    @discardableResult
    func seed(_ user: AccountID, _ names: [String]) -> [Int64] {
        let answering = storage.answering
        storage.answering = .immediately
        defer { storage.answering = answering }
        return names.map { name in
            var id: Int64 = -1
            storage.acting(for: .daemon).addContact(ContactDraft(name: name, phone: nil, email: nil, note: nil),
                                                    for: user) {
                id = (try? $0.get().contact.id) ?? -1
            }
            return id
        }
    }

    func pageIDs(_ user: AccountID, _ query: String = "", into answers: Answers<ContactsService.PageIDs>) {
        service.pageIDs(userID: user, query: query, limit: 50, offset: 0, charge: charge, completion: answers.completion)
    }

    /// The ids the index lists for `user` now (loaded already; fails the test otherwise).
    func listed(_ user: AccountID, _ query: String = "") -> [Int64] {
        let answers = Answers<ContactsService.PageIDs>()
        pageIDs(user, query, into: answers)
        #expect(answers.all.count == 1, "the index of \(user) was not loaded")
        return answers.values.first?.ids ?? []
    }

    func add(_ user: AccountID, _ name: String, into answers: Answers<Contact>) {
        service.add(userID: user, ContactDraft(name: name, phone: nil, email: nil, note: nil), charge: charge,
                    completion: answers.completion)
    }

    /// Answers the oldest held call of `operation`.
    func release(_ operation: InMemoryStorage.Operation) {
        guard let index = storage.pending.firstIndex(of: operation) else {
            Issue.record("no \(operation) is held")
            return
        }
        storage.release(at: index)
    }

    func calls(_ operation: InMemoryStorage.Operation) -> Int { storage.calls.filter { $0 == operation }.count }
}

/// `InMemoryStorage` with what it cannot do: an index load that reads its snapshot when it is asked but answers
/// only when released (so writes can be answered after the snapshot and before the load's answer, which the loop
/// must not lose), and a read that started before it was called off. The service reaches it as it reaches a
/// backend: through a view bound to a charge (`acting(for:)`), recorded in `charges`.
final class InterposedStorage {
    private let inner: InMemoryStorage
    private var held: [() -> Void] = []
    /// What each view was bound to, in order.
    private(set) var charges: [QueueCharge] = []
    /// Whether index loads wait for `releaseLoads`.
    var holdsLoads: Bool
    /// Whether reads go ahead though they were called off (they had started already).
    var readsStartedBeforeCancel = false

    init(_ inner: InMemoryStorage, holdsLoads: Bool) {
        self.inner = inner
        self.holdsLoads = holdsLoads
    }

    func releaseLoads() {
        let loads = held
        held = []
        for load in loads { load() }
    }

    func acting(for charge: QueueCharge) -> Acting {
        charges.append(charge)
        return Acting(host: self, inner: inner.acting(for: charge))
    }

    /// The inner storage's view, with the host's interpositions.
    struct Acting: ContactStorage {
        let host: InterposedStorage
        let inner: InMemoryStorage.Acting

        func loadSearchIndex<T: Sendable>(of user: AccountID, build: @escaping @Sendable ([ContactIndexEntry]) -> T,
                                          completion: @escaping StorageCompletion<T>) {
            guard host.holdsLoads else { return inner.loadSearchIndex(of: user, build: build, completion: completion) }
            inner.loadSearchIndex(of: user, build: build) { [host] result in host.held.append { completion(result) } }
        }

        func readContacts<T: Sendable>(_ ids: [Int64], of user: AccountID, cancelled: Locked<Bool>,
                                       encode: @escaping @Sendable ([Contact]) -> T,
                                       completion: @escaping StorageCompletion<T>) {
            inner.readContacts(ids, of: user, cancelled: host.readsStartedBeforeCancel ? Locked(false) : cancelled,
                               encode: encode, completion: completion)
        }

        func addContact(_ draft: ContactDraft, for user: AccountID, session: SessionGrant,
                        completion: @escaping StorageCompletion<StoredContact>) {
            inner.addContact(draft, for: user, session: session, completion: completion)
        }

        func updateContact(_ id: Int64, of user: AccountID, session: SessionGrant, with patch: ContactPatch,
                           completion: @escaping StorageCompletion<ContactUpdate>) {
            inner.updateContact(id, of: user, session: session, with: patch, completion: completion)
        }

        func removeContact(_ id: Int64, of user: AccountID, session: SessionGrant,
                           completion: @escaping StorageCompletion<Bool>) {
            inner.removeContact(id, of: user, session: session, completion: completion)
        }

        func importContacts(_ data: String, format: ContactFormat, for user: AccountID, session: SessionGrant,
                            completion: @escaping StorageCompletion<ContactImportOutcome>) {
            inner.importContacts(data, format: format, for: user, session: session, completion: completion)
        }

        func exportContacts<Sink: ContactExportSink>(of user: AccountID, after: Int64, into sink: Sink,
                                                     cancelled: Locked<Bool>,
                                                     completion: @escaping StorageCompletion<Sink.Output>) {
            inner.exportContacts(of: user, after: after, into: sink, cancelled: cancelled, completion: completion)
        }

        func contactChanges(of user: AccountID, since: Int64?, limit: Int,
                            completion: @escaping StorageCompletion<ContactChangesRead>) {
            inner.contactChanges(of: user, since: since, limit: limit, completion: completion)
        }

        func readCards(_ uids: [String], of user: AccountID, byteLimit: Int,
                       completion: @escaping StorageCompletion<CardsRead>) {
            inner.readCards(uids, of: user, byteLimit: byteLimit, completion: completion)
        }

        func putCard(_ card: String, uid: String, precondition: CardPrecondition, for user: AccountID,
                     session: SessionGrant, completion: @escaping StorageCompletion<CardPut>) {
            inner.putCard(card, uid: uid, precondition: precondition, for: user, session: session, completion: completion)
        }

        func removeCard(uid: String, precondition: CardPrecondition, of user: AccountID, session: SessionGrant,
                        completion: @escaping StorageCompletion<CardRemoval>) {
            inner.removeCard(uid: uid, precondition: precondition, of: user, session: session, completion: completion)
        }
    }
}

@Suite("Contacts service over the storage boundary")
struct ContactsServiceTests {
    private static func draft(_ name: String) -> ContactDraft { ContactDraft(name: name, phone: nil, email: nil, note: nil) }

    // MARK: Loading the index

    @Test func aUsersIndexLoadsOnceWhileOtherUsersAreAnsweredAndItsWaitersGoInOrder() {
        let fixture = ContactsFixture()
        let ann = fixture.account("ann")
        let bob = fixture.account("bob")
        fixture.seed(ann, ["Alice", "Albert"])
        let bobsContacts = fixture.seed(bob, ["Bea"])
        _ = fixture.listed(bob)
        fixture.storage.answering = .onRelease

        var order: [String] = []
        for query in ["", "al", "bert"] {
            fixture.service.pageIDs(userID: ann, query: query, limit: 50, offset: 0, charge: fixture.charge) { _ in
                order.append(query)
            }
        }
        #expect(fixture.calls(.loadSearchIndex) == 2, "one load for bob before, one for ann now")
        #expect(order.isEmpty)
        // Bob's index is in memory: he is answered at once while Ann's loads.
        #expect(fixture.listed(bob) == bobsContacts)
        fixture.release(.loadSearchIndex)
        #expect(order == ["", "al", "bert"])
        #expect(fixture.listed(ann, "al").count == 2)
        #expect(fixture.calls(.loadSearchIndex) == 2)
    }

    /// Another daemon's change makes a user's index stale: a loaded one is dropped, and a load whose snapshot was
    /// read before the change is read again before anyone is answered from it.
    @Test func aChangeElsewhereDropsTheIndexEvenWhileItLoads() {
        let fixture = ContactsFixture(holdingLoads: true)
        let ann = fixture.account("ann")
        let alice = fixture.seed(ann, ["Alice"])
        let answers = Answers<ContactsService.PageIDs>()
        fixture.pageIDs(ann, into: answers)
        // The snapshot holds Alice only; then another daemon adds Bea.
        let bea = fixture.seed(ann, ["Bea"])
        fixture.service.changedElsewhere(userID: ann)
        fixture.pageIDs(ann, "bea", into: answers)
        fixture.interposed?.releaseLoads()
        #expect(answers.all.isEmpty, "nobody is answered from the stale snapshot")
        fixture.interposed?.releaseLoads()
        #expect(answers.values.map(\.ids) == [alice + bea, bea])
        #expect(fixture.calls(.loadSearchIndex) == 2)
        #expect(fixture.listed(ann) == alice + bea, "the fresh index is kept")

        let cy = fixture.seed(ann, ["Cy"])
        fixture.service.changedElsewhere(userID: ann)
        let later = Answers<ContactsService.PageIDs>()
        fixture.pageIDs(ann, into: later)
        #expect(later.all.isEmpty, "a loaded index is dropped, and loaded again")
        fixture.interposed?.releaseLoads()
        #expect(later.values.map(\.ids) == [alice + bea + cy])
        #expect(fixture.calls(.loadSearchIndex) == 3)
    }

    /// After changes may have been missed, every user's index is read again, loaded or loading.
    @Test func invalidatingAllDropsEveryIndex() {
        let fixture = ContactsFixture(holdingLoads: true)
        let ann = fixture.account("ann"), bob = fixture.account("bob")
        fixture.seed(ann, ["Alice"])
        fixture.seed(bob, ["Bea"])
        let first = Answers<ContactsService.PageIDs>()
        fixture.pageIDs(ann, into: first)
        fixture.interposed?.releaseLoads()
        fixture.pageIDs(bob, into: first)
        let annMore = fixture.seed(ann, ["Albert"])
        fixture.service.invalidateAll()
        fixture.interposed?.releaseLoads()
        #expect(first.all.count == 1, "bob's load was out when everything was invalidated")
        let again = Answers<ContactsService.PageIDs>()
        fixture.pageIDs(ann, "albert", into: again)
        fixture.interposed?.releaseLoads()
        #expect(first.all.count == 2)
        #expect(again.values.map(\.ids) == [annMore])
        #expect(fixture.calls(.loadSearchIndex) == 4)
    }

    @Test func pastTheBudgetARequestWaitingForTheIndexIsAnsweredBusy() {
        let fixture = ContactsFixture()
        let ann = fixture.account("ann")
        fixture.storage.answering = .onRelease
        let answers = Answers<ContactsService.PageIDs>()
        for _ in 0..<(ContactsService.indexWaitersPerUser + 3) { fixture.pageIDs(ann, into: answers) }
        #expect(answers.errors == Array(repeating: .busy(retryAfterMs: ContactsService.indexLoadRetryMs), count: 3))
        fixture.release(.loadSearchIndex)
        #expect(answers.values.count == ContactsService.indexWaitersPerUser)
        #expect(fixture.calls(.loadSearchIndex) == 1)
    }

    @Test(arguments: [StorageFailure.full, .unavailable(retryAfterMs: 1_000), .busy(retryAfterMs: 40), .other])
    func aFailedLoadAnswersEveryWaiterWithItsErrorAndIsNotKept(failure: StorageFailure) {
        let fixture = ContactsFixture()
        let ann = fixture.account("ann")
        let ids = fixture.seed(ann, ["Alice"])
        fixture.storage.answering = .onRelease
        fixture.storage.failures[.loadSearchIndex] = failure
        let answers = Answers<ContactsService.PageIDs>()
        fixture.pageIDs(ann, into: answers)
        fixture.pageIDs(ann, "al", into: answers)
        fixture.release(.loadSearchIndex)
        #expect(answers.errors == [failure.rosterError, failure.rosterError])

        fixture.storage.failures = [:]
        fixture.storage.answering = .immediately
        #expect(fixture.listed(ann) == ids, "the next request loads again")
        #expect(fixture.calls(.loadSearchIndex) == 2)
    }

    @Test func anIndexReleasedWhileItLoadsIsNotKept() {
        let fixture = ContactsFixture()
        let ann = fixture.account("ann")
        fixture.storage.answering = .onRelease
        let answers = Answers<ContactsService.PageIDs>()
        fixture.pageIDs(ann, into: answers)
        fixture.service.release(userID: ann)
        fixture.release(.loadSearchIndex)
        #expect(answers.values.count == 1)
        fixture.pageIDs(ann, into: answers)
        #expect(fixture.calls(.loadSearchIndex) == 2)
    }

    /// The loop's side of `ContactIndexes`' rule: writes answered after the load read its snapshot, and before the
    /// load answered, are in the index (a backend that orders loads with writes never does this, but the loop does
    /// not depend on it); so are those the snapshot already held.
    @Test func writesAnsweredWhileTheIndexLoadsAreNotLost() {
        let fixture = ContactsFixture(holdingLoads: true)
        let ann = fixture.account("ann")
        let kept = fixture.seed(ann, ["Kept", "Renamed", "Removed"])
        let answers = Answers<ContactsService.PageIDs>()
        fixture.pageIDs(ann, into: answers)
        // The snapshot is read: the writes below miss it.
        let added = Answers<Contact>()
        fixture.add(ann, "Added", into: added)
        let updated = Answers<Contact>()
        fixture.service.update(userID: ann, id: kept[1], ContactPatch(name: "Zed", phone: nil, email: nil, note: nil),
                               charge: fixture.charge, completion: updated.completion)
        let removed = Answers<Void>()
        fixture.service.remove(userID: ann, id: kept[2], charge: fixture.charge, completion: removed.completion)
        #expect(added.values.count == 1 && updated.values.count == 1 && removed.values.count == 1)
        #expect(answers.all.isEmpty)
        fixture.interposed?.releaseLoads()

        let addedID = added.values.first?.id ?? -1
        #expect(answers.values.first?.ids == [addedID, kept[0], kept[1]])
        #expect(fixture.listed(ann) == [addedID, kept[0], kept[1]])
        #expect(fixture.listed(ann, "zed") == [kept[1]])
        #expect(fixture.listed(ann, "renamed").isEmpty)
    }

    // MARK: Writes

    /// Review fix: the index follows what each write answered (its keys come with it), never a read of the row
    /// after it, so a read that fails cannot drop a written contact, nor the index, which is never loaded again.
    @Test func theIndexFollowsWhatEachWriteAnsweredAndReadsNoRow() {
        let fixture = ContactsFixture()
        let ann = fixture.account("ann")
        let seeded = fixture.seed(ann, ["Alice", "Bob"])
        #expect(fixture.listed(ann) == seeded)
        fixture.storage.failures[.readContacts] = .other
        fixture.storage.failures[.loadSearchIndex] = .other

        let added = Answers<Contact>()
        fixture.add(ann, "Carol", into: added)
        let carol = added.values.first?.id ?? -1
        let updated = Answers<Contact>()
        fixture.service.update(userID: ann, id: seeded[0], ContactPatch(name: "Zoe", phone: nil, email: nil, note: nil),
                               charge: fixture.charge, completion: updated.completion)
        let removed = Answers<Void>()
        fixture.service.remove(userID: ann, id: seeded[1], charge: fixture.charge, completion: removed.completion)
        let imported = Answers<ContactImportOutcome>()
        fixture.service.importContacts(userID: ann, format: .csv, data: "name\r\nDave\r\n", charge: fixture.charge,
                                       completion: imported.completion)
        let dave = imported.values.first?.added.first?.contact.id ?? -1

        #expect(fixture.listed(ann) == [carol, dave, seeded[0]])
        #expect(fixture.listed(ann, "zoe") == [seeded[0]])
        #expect(fixture.listed(ann, "alice").isEmpty)
        #expect(fixture.calls(.readContacts) == 0 && fixture.calls(.loadSearchIndex) == 1)
        #expect(fixture.changed == [ann, ann, ann, ann])
    }

    @Test func writesThatChangeNothingLeaveTheIndexAndTheFormsAlone() {
        let fixture = ContactsFixture()
        let ann = fixture.account("ann")
        let bob = fixture.account("bob")
        let bobs = fixture.seed(bob, ["Bea"])
        #expect(fixture.listed(ann).isEmpty)
        let invalid = Answers<Contact>()
        fixture.add(ann, "", into: invalid)
        fixture.service.update(userID: ann, id: bobs[0], ContactPatch(name: "Mine", phone: nil, email: nil, note: nil),
                               charge: fixture.charge, completion: invalid.completion)
        fixture.service.update(userID: ann, id: 999, ContactPatch(name: nil, phone: "not a phone", email: nil, note: nil),
                               charge: fixture.charge, completion: invalid.completion)
        let removed = Answers<Void>()
        fixture.service.remove(userID: ann, id: bobs[0], charge: fixture.charge, completion: removed.completion)
        let duplicate = Answers<ContactImportOutcome>()
        fixture.service.importContacts(userID: ann, format: .csv, data: "name\r\n", charge: fixture.charge,
                                       completion: duplicate.completion)
        #expect(invalid.errors == [ContactError.invalidName(.required).rosterError, .notFound, .notFound])
        #expect(removed.errors == [.notFound])
        #expect(duplicate.values.first?.added.isEmpty == true)
        #expect(fixture.changed.isEmpty)
        #expect(fixture.listed(ann).isEmpty && fixture.listed(bob) == bobs)
    }

    @Test func anUpdateThatBreaksARuleIsItsError() {
        let fixture = ContactsFixture()
        let ann = fixture.account("ann")
        let ids = fixture.seed(ann, ["Alice"])
        let answers = Answers<Contact>()
        fixture.service.update(userID: ann, id: ids[0], ContactPatch(name: nil, phone: "not a phone", email: nil, note: nil),
                               charge: fixture.charge, completion: answers.completion)
        #expect(answers.errors == [ContactError.invalidPhone.rosterError])
        #expect(fixture.changed.isEmpty)
    }

    // MARK: Imports and exports always answer

    enum Mode: CaseIterable, Sendable {
        case immediately, released, failing, busy, connectionGone
    }

    /// Review fix: an import or an export ends with exactly one answer, whatever the storage does.
    @Test(arguments: [Mode.immediately, .released, .failing, .busy, .connectionGone])
    func everyImportAndExportIsAnsweredOnce(mode: Mode) {
        let fixture = ContactsFixture()
        let ann = fixture.account("ann")
        fixture.seed(ann, ["Alice", "Bob"])
        let gone = Locked(false)
        switch mode {
        case .immediately, .connectionGone: break
        case .released: fixture.storage.answering = .onRelease
        case .failing: fixture.storage.failure = .full
        case .busy: fixture.storage.failure = .busy(retryAfterMs: 70)
        }
        let imports = Answers<ContactImportOutcome>()
        let exports = Answers<[UInt8]>()
        for data in ["name\r\nCarol\r\n", "", "not,a\r\n\"csv", "BEGIN:VCARD\r\nEND:VCARD\r\n"] {
            fixture.service.importContacts(userID: ann, format: .csv, data: data, charge: fixture.charge,
                                           completion: imports.completion)
        }
        if mode == .connectionGone { gone.withLock { $0 = true } }
        for contactLimit in [nil, 1] as [Int?] {
            let writer = ContactExportWriter(id: 1, format: .vcard, startsFile: true, byteLimit: 1 << 20, contactLimit: contactLimit)
            fixture.service.export(userID: ann, after: nil, into: writer, charge: fixture.charge, cancelled: gone,
                                   completion: exports.completion)
        }
        if mode == .released {
            #expect(imports.all.isEmpty && exports.all.isEmpty)
            fixture.storage.releaseAll()
        }
        #expect(imports.all.count == 4)
        #expect(exports.all.count == 2)
        switch mode {
        case .immediately, .released:
            #expect(imports.values.map(\.added.count) == [1, 0, 0, 0])
            #expect(exports.values.count == 2)
        case .failing:
            #expect(imports.errors == Array(repeating: .storageFull, count: 4))
            #expect(exports.errors == [.storageFull, .storageFull])
        case .busy:
            #expect(imports.errors == Array(repeating: .busy(retryAfterMs: 70), count: 4))
            #expect(exports.errors == [.busy(retryAfterMs: 70), .busy(retryAfterMs: 70)])
        case .connectionGone:
            #expect(imports.values.count == 4)
            #expect(exports.errors == [.busy(retryAfterMs: 0), .busy(retryAfterMs: 0)])
        }
    }

    /// The service binds the connection's charge as it is; the storage charges the import its data's size.
    @Test func anImportIsChargedItsDataSize() {
        let fixture = ContactsFixture(holdingLoads: true)
        let ann = fixture.account("ann")
        let answers = Answers<ContactImportOutcome>()
        fixture.service.importContacts(userID: ann, format: .csv, data: "name\r\nÅsa\r\n", charge: fixture.charge,
                                       completion: answers.completion)
        var charge = fixture.charge
        charge.bytes = 12
        #expect(fixture.interposed?.charges == [fixture.charge])
        #expect(fixture.storage.importCharges == [charge])
        #expect(answers.values.count == 1)
    }
}

/// The service's writes as these tests make them: for a session that never ends.
extension ContactsService {
    fileprivate func add(userID: AccountID, _ draft: ContactDraft, charge: QueueCharge, completion: @escaping Completion<Contact>) {
        add(userID: userID, grant: SessionGrant(tokenHash: nil), draft, charge: charge, completion: completion)
    }

    fileprivate func update(userID: AccountID, id: Int64, _ patch: ContactPatch, charge: QueueCharge,
                            completion: @escaping Completion<Contact>) {
        update(userID: userID, grant: SessionGrant(tokenHash: nil), id: id, patch, charge: charge, completion: completion)
    }

    fileprivate func remove(userID: AccountID, id: Int64, charge: QueueCharge, completion: @escaping Completion<Void>) {
        remove(userID: userID, grant: SessionGrant(tokenHash: nil), id: id, charge: charge, completion: completion)
    }

    fileprivate func importContacts(userID: AccountID, format: ContactFormat, data: String, charge: QueueCharge,
                                    completion: @escaping Completion<ContactImportOutcome>) {
        importContacts(userID: userID, grant: SessionGrant(tokenHash: nil), format: format, data: data, charge: charge,
                       completion: completion)
    }
}
