import RosterCore
import RosterRuntime
import RosterProtocol
import RosterStorage

/// Every user's contacts as the loop sees them: an in-memory search index per logged-in user, loaded off the loop
/// and kept up to date from what each write answers, over any `ContactStorage`. Each change ends with
/// `onChange(userID)`, so open contacts forms of that user, on any connection, get fresh results.
///
/// Every answer may come at once or later (a page whose index is loaded and whose rows the backend holds in
/// memory, or one that waits for the index and a read). A user's writes, imports and exports complete in the order
/// they were made (the storage's rule), so their answers, and the index changes that go with them, reach the loop
/// in that order too (see `ContactIndexes` for writes answered while the index loads).
final class ContactsService {
    typealias Completion<T> = (Result<T, RosterError>) -> Void
    /// A page the index chose: the contacts' ids, best first, how many matched in all, and for a search the keys
    /// each was indexed by, which say what of it the query matched (`ContactMatch`).
    typealias PageIDs = (ids: [Int64], total: Int, keys: [Int64: ContactSearchKeys])

    /// Requests that may wait for one user's index to load; past it they are answered `busy`. A connection has at
    /// most `MaxRequestsInFlight=` waiting and a form one search, so only many connections of one user reach it.
    static let indexWaitersPerUser = 256
    /// The `retry_after_ms` of a request refused while the index loads: about what 100,000 contacts take to load.
    static let indexLoadRetryMs: Int64 = 250

    /// Every user's contacts, as one payer reaches them.
    private let contacts: BoundStorage<any ContactStorage>
    private var indexes = ContactIndexes<Completion<ContactIndex>>(waiterLimit: ContactsService.indexWaitersPerUser)
    var onChange: ((AccountID) -> Void)?

    convenience init(storage: any Storage) {
        self.init(contacts: BoundStorage { storage.acting(for: $0) })
    }

    init(contacts: BoundStorage<any ContactStorage>) {
        self.contacts = contacts
    }

    // MARK: Reads

    /// The ids of a page of search results (or of the list, for an empty query), from the user's index: at once
    /// when it is loaded, once it is otherwise.
    func pageIDs(userID: AccountID, query: String, limit: Int, offset: Int, charge: QueueCharge,
                 completion: @escaping Completion<PageIDs>) {
        withIndex(userID, charge: charge) { result in
            completion(result.map { index in
                if query.isEmpty {
                    let page = index.list(limit: limit, offset: offset)
                    return (page.ids, page.total, [:])
                }
                let page = index.search(query: query, limit: limit, offset: offset)
                var keys: [Int64: ContactSearchKeys] = [:]
                for id in page.ids { keys[id] = index.keys(of: id) }
                return (page.ids, page.total, keys)
            })
        }
    }

    /// Search results (or the whole list for an empty query), best first, with the page's contacts and what of
    /// each the query matched. A contact removed between the choice of the page and the read of its rows is left out.
    func page(userID: AccountID, query: String, limit: Int, offset: Int, charge: QueueCharge, cancelled: Locked<Bool>,
              completion: @escaping Completion<(items: [FoundContact], total: Int)>) {
        pageIDs(userID: userID, query: query, limit: limit, offset: offset, charge: charge) { [contacts] result in
            switch result {
            case .failure(let error):
                completion(.failure(error))
            case .success(let page) where page.ids.isEmpty:
                completion(.success((items: [], total: page.total)))
            case .success(let page):
                contacts.acting(for: charge).readContacts(page.ids, of: userID, cancelled: cancelled, encode: { $0 }) { read in
                    completion(read.map { contacts in
                        (items: contacts.map { FoundContact($0, query: query, keys: page.keys[$0.id]) }, total: page.total)
                    }.mapError(\.rosterError))
                }
            }
        }
    }

    /// The answer line `{items, total}` for a page the index chose, read and encoded off the loop: a page of 1,000
    /// took the loop about as long as thousands of small requests. A read, so it keeps no order with the
    /// user's writes (the page's ids were chosen already); a contact removed meanwhile is left out.
    func pageLine(userID: AccountID, page: PageIDs, query: String, id: JSONValue, charge: QueueCharge, cancelled: Locked<Bool>,
                  completion: @escaping Completion<[UInt8]>) {
        let total = page.total
        let keys = page.keys
        contacts.acting(for: charge).readContacts(page.ids, of: userID, cancelled: cancelled, encode: { items in
            RPCMessage.result(id: id, ["items": .array(items.map { ContactJSON.encode(FoundContact($0, query: query, keys: keys[$0.id])) }),
                                       "total": .int(total)])
        }) { read in completion(read.mapError(\.rosterError)) }
    }

    /// Drops a user's index once no connection is logged in as them; it is loaded again when needed.
    func release(userID: AccountID) { indexes.release(userID) }

    /// Another writer (another daemon) changed the user's contacts: the index is stale, and is loaded again when
    /// next needed; a load under way is read again (see `ContactIndexes`).
    func changedElsewhere(userID: AccountID) { indexes.invalidate(userID) }

    /// Changes may have been missed: every index is loaded again when next needed.
    func invalidateAll() { indexes.invalidateAll() }

    /// Hands `body` the user's index: now when it is loaded, after the load otherwise (started here if none is
    /// under way). See `ContactIndexes` for the order, the budget and the writes answered meanwhile.
    private func withIndex(_ userID: AccountID, charge: QueueCharge, _ body: @escaping Completion<ContactIndex>) {
        switch indexes.request(userID, body) {
        case .ready(let index):
            body(.success(index))
        case .waiting:
            break
        case .refused:
            body(.failure(.busy(retryAfterMs: Self.indexLoadRetryMs)))
        case .startLoad:
            load(userID, charge: charge)
        }
    }

    private func load(_ userID: AccountID, charge: QueueCharge) {
        // Held strongly: the waiters are owed an answer whatever happens meanwhile.
        contacts.acting(for: charge).loadSearchIndex(of: userID, build: { ContactIndex($0) }) { result in
            self.indexLoaded(userID, charge: charge, result)
        }
    }

    private func indexLoaded(_ userID: AccountID, charge: QueueCharge, _ result: Result<ContactIndex, StorageFailure>) {
        if indexes.restartIfStale(userID) { return load(userID, charge: charge) }
        let (waiters, outcome) = indexes.loaded(userID, result.mapError(\.rosterError))
        for waiter in waiters { waiter(outcome) }
    }

    // MARK: Writes

    /// A write answered: the index follows what it answered, and the user's open forms refresh.
    private func changed(_ userID: AccountID, _ change: ContactIndexChange?) {
        if let change { indexes.changed(userID, change) }
        onChange?(userID)
    }

    // Each write carries the grant of the session that asked: one that ended before its turn writes nothing and
    // answers `unauthenticated` (see `SessionGrant`).

    func add(userID: AccountID, grant: SessionGrant, _ draft: ContactDraft, charge: QueueCharge,
             completion: @escaping Completion<Contact>) {
        do throws(ContactError) {
            try draft.validate()
        } catch {
            return completion(.failure(error.rosterError))
        }
        contacts.acting(for: charge).addContact(draft, for: userID, session: grant) { [weak self] result in
            switch result {
            case .success(let stored):
                self?.changed(userID, .upsert([(id: stored.contact.id, keys: stored.keys)]))
                completion(.success(stored.contact))
            case .failure(let failure):
                completion(.failure(failure.rosterError))
            }
        }
    }

    /// Fields left nil keep their value; an empty string clears an optional field. The storage applies the patch
    /// to the contact as it stands when this update's turn comes, so an update pipelined after another builds on
    /// the one before it.
    func update(userID: AccountID, grant: SessionGrant, id: Int64, _ patch: ContactPatch, charge: QueueCharge,
                completion: @escaping Completion<Contact>) {
        contacts.acting(for: charge).updateContact(id, of: userID, session: grant, with: patch) { [weak self] result in
            switch result {
            case .success(.updated(let stored)):
                self?.changed(userID, .upsert([(id: stored.contact.id, keys: stored.keys)]))
                completion(.success(stored.contact))
            case .success(.notFound):
                completion(.failure(.notFound))
            case .success(.invalid(let error)):
                completion(.failure(error.rosterError))
            case .failure(let failure):
                completion(.failure(failure.rosterError))
            }
        }
    }

    func remove(userID: AccountID, grant: SessionGrant, id: Int64, charge: QueueCharge,
                completion: @escaping Completion<Void>) {
        contacts.acting(for: charge).removeContact(id, of: userID, session: grant) { [weak self] result in
            switch result {
            case .success(true):
                self?.changed(userID, .remove(id))
                completion(.success(()))
            case .success(false):
                completion(.failure(.notFound))
            case .failure(let failure):
                completion(.failure(failure.rosterError))
            }
        }
    }

    /// Costs what its own rows cost: only the added contacts go into the search index, with the keys the
    /// storage wrote. The storage charges its data as bytes of queued work.
    func importContacts(userID: AccountID, grant: SessionGrant, format: ContactFormat, data: String, charge: QueueCharge,
                        completion: @escaping Completion<ContactImportOutcome>) {
        contacts.acting(for: charge).importContacts(data, format: format, for: userID, session: grant) { [weak self] result in
            if case .success(let outcome) = result, !outcome.added.isEmpty {
                self?.changed(userID, .upsert(outcome.added.map { (id: $0.contact.id, keys: $0.keys) }))
            }
            completion(result.mapError(\.rosterError))
        }
    }

    // MARK: Cards and changes

    /// The changes after `since` (nil: a full sync), in the order of the user's writes.
    func changes(userID: AccountID, since: Int64?, limit: Int, charge: QueueCharge,
                 completion: @escaping Completion<ContactChangesRead>) {
        contacts.acting(for: charge).contactChanges(of: userID, since: since, limit: limit) { result in
            completion(result.mapError(\.rosterError))
        }
    }

    /// The cards under these uids, in the order given, without the uids no contact has.
    func cards(userID: AccountID, uids: [String], byteLimit: Int, charge: QueueCharge,
               completion: @escaping Completion<CardsRead>) {
        contacts.acting(for: charge).readCards(uids, of: userID, byteLimit: byteLimit) { result in
            completion(result.mapError(\.rosterError))
        }
    }

    /// Stores a card under `uid` when `precondition` holds; the index follows what was written.
    func putCard(userID: AccountID, grant: SessionGrant, uid: String, card: String, precondition: CardPrecondition,
                 charge: QueueCharge, completion: @escaping Completion<CardPut>) {
        contacts.acting(for: charge).putCard(card, uid: uid, precondition: precondition, for: userID,
                                             session: grant) { [weak self] result in
            switch result {
            case .success(.created(let stored)), .success(.updated(let stored)):
                self?.changed(userID, .upsert([(id: stored.contact.id, keys: stored.keys)]))
            case .success(.preconditionFailed), .success(.invalid), .failure:
                break
            }
            completion(result.mapError(\.rosterError))
        }
    }

    /// Removes the contact under `uid` when `precondition` holds.
    func removeCard(userID: AccountID, grant: SessionGrant, uid: String, precondition: CardPrecondition,
                    charge: QueueCharge, completion: @escaping Completion<Void>) {
        contacts.acting(for: charge).removeCard(uid: uid, precondition: precondition, of: userID,
                                                session: grant) { [weak self] result in
            switch result {
            case .success(.removed(let id)):
                self?.changed(userID, .remove(id))
                completion(.success(()))
            case .success(.notFound): completion(.failure(.notFound))
            case .success(.preconditionFailed): completion(.failure(.preconditionFailed))
            case .failure(let failure): completion(.failure(failure.rosterError))
            }
        }
    }

    // MARK: Export

    /// The answer line of an export page, written off the loop in id order by `ContactExportWriter` (a book of
    /// 100k contacts takes a while to write out, and nothing of that size is encoded on the loop), in the user's
    /// order of writes. `cancelled` is set when the connection closes: nobody will see the page, and the workers
    /// need not spend its reads and encoding on it (a peer that pipelined big pages and left would otherwise keep
    /// them from other users' writes for seconds).
    func export(userID: AccountID, after: Int64?, into writer: ContactExportWriter, charge: QueueCharge,
                cancelled: Locked<Bool>, completion: @escaping Completion<[UInt8]>) {
        contacts.acting(for: charge).exportContacts(of: userID, after: after ?? 0, into: writer, cancelled: cancelled) { result in
            completion(result.mapError(\.rosterError).flatMap { $0 })
        }
    }
}
