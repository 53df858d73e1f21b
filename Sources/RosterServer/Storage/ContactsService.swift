import RosterCore
import RosterRuntime
import RosterProtocol
import RosterStore

/// Every user's contacts as the loop sees them: an in-memory search index per logged-in user (built from the
/// keys stored with each row), reads on the loop, and durable writes on the storage lane. Each change ends with
/// `onChange(userID)`, so open contacts forms of that user, on any connection, get fresh results.
///
/// A user's writes, imports and exports run one at a time in the order they came (`QueueOrder.contacts`), so
/// their answers, and the index updates that go with them, reach the loop in that order too.
final class ContactsService {
    typealias Completion<T> = (Result<T, RosterError>) -> Void

    private let store: ContactStore
    private let storage: WorkerPool<WorkerContext>
    private let loop: EventLoop
    private let logger: Logger
    private var indexes: [Int64: ContactIndex] = [:]
    var onChange: ((Int64) -> Void)?

    init(loop: EventLoop, database: Database, storage: WorkerPool<WorkerContext>, logger: Logger) {
        self.loop = loop
        self.store = ContactStore(database: database)
        self.storage = storage
        self.logger = logger
    }

    // MARK: Reads on the loop

    /// Search results (or the whole list for an empty query), best first, with the page's contacts.
    func search(userID: Int64, query: String, limit: Int, offset: Int) throws(RosterError) -> (items: [Contact], total: Int) {
        let page = try pageIDs(userID: userID, query: query, limit: limit, offset: offset)
        do {
            return (try Self.contacts(page.ids, of: userID, in: store), page.total)
        } catch {
            throw failure(error, "read contact")
        }
    }

    /// The ids of a page of search results (or of the list), from the in-memory index: no row is read.
    func pageIDs(userID: Int64, query: String, limit: Int, offset: Int) throws(RosterError) -> (ids: [Int64], total: Int) {
        let index = try loadedIndex(userID)
        return query.isEmpty ? index.list(limit: limit, offset: offset) : index.search(query: query, limit: limit, offset: offset)
    }

    /// The answer line `{items, total}` for a page the index chose, read and encoded on a storage worker: a page of
    /// 1,000 took the loop about as long as thousands of small requests (issue 12). A read, so it keeps no order
    /// with the user's writes (the page's ids were chosen already); a contact removed meanwhile is left out.
    func pageLine(userID: Int64, ids: [Int64], total: Int, id: JSONValue, charge: QueueCharge, unless gone: Locked<Bool>,
                  completion: @escaping Completion<[UInt8]>) {
        let logger = self.logger
        storage.run(on: loop, charge: charge, { context in
            if gone.withLock({ $0 }) { return .failure(Self.nobodyToAnswer) }
            do throws(StoreError) {
                let items = try Self.contacts(ids, of: userID, in: ContactStore(database: try context.database()))
                return .success(RPCMessage.result(id: id, ["items": .array(items.map(ContactJSON.encode)), "total": .int(total)]))
            } catch {
                return .failure(error.rosterError(logger: logger, "contacts: read contact"))
            }
        }, completion: completion)
    }

    private static func contacts(_ ids: [Int64], of userID: Int64, in store: ContactStore) throws(StoreError) -> [Contact] {
        var items: [Contact] = []
        items.reserveCapacity(ids.count)
        for id in ids {
            if let record = try store.contact(userID: userID, id: id) { items.append(record.contact) }
        }
        return items
    }

    func totalCount() -> Int { (try? store.totalCount()) ?? 0 }

    /// Drops a user's index once no connection is logged in as them; it is rebuilt from the rows when needed.
    func release(userID: Int64) { indexes[userID] = nil }

    private func loadedIndex(_ userID: Int64) throws(RosterError) -> ContactIndex {
        if let index = indexes[userID] { return index }
        do {
            let records = try store.contacts(userID: userID)
            let index = ContactIndex(records.map { (id: $0.contact.id, keys: $0.keys) })
            indexes[userID] = index
            return index
        } catch {
            throw failure(error, "load contacts")
        }
    }

    /// After a write committed, the row as it now stands decides the index. A row that cannot be read drops the
    /// whole index, to be rebuilt from the rows at the next search, rather than leave that contact out of it.
    private func refresh(userID: Int64, ids: [Int64]) {
        guard indexes[userID] != nil else { return onChange?(userID) ?? () }
        for id in ids {
            do {
                if let record = try store.contact(userID: userID, id: id) {
                    indexes[userID]?.upsert(id: id, keys: record.keys)
                } else {
                    indexes[userID]?.remove(id: id)
                }
            } catch {
                _ = failure(error, "refresh the search index")
                indexes[userID] = nil
                break
            }
        }
        onChange?(userID)
    }

    // MARK: Writes on the storage lane

    private func offload<T: Sendable>(userID: Int64, _ charge: QueueCharge,
                            _ job: @escaping @Sendable (inout WorkerContext) -> Result<T, RosterError>,
                            completion: @escaping Completion<T>) {
        storage.run(on: loop, charge: charge, order: .contacts(userID: userID), job, completion: completion)
    }

    func add(userID: Int64, _ draft: ContactDraft, charge: QueueCharge, completion: @escaping Completion<Contact>) {
        do throws(ContactError) {
            try draft.validate()
        } catch {
            return completion(.failure(error.rosterError))
        }
        let logger = self.logger
        offload(userID: userID, charge, { context in
            do throws(StoreError) {
                let keys = ContactSearchKeys(draft: draft)
                let store = ContactStore(database: try context.database())
                let record = try context.writeTurn.take { () throws(StoreError) in
                    try store.insert(userID: userID, draft, keys: keys, now: SystemWallClock().nowMs())
                }
                return .success(record.contact)
            } catch {
                return .failure(error.rosterError(logger: logger, "contacts write"))
            }
        }) { [weak self] result in
            if case .success(let contact) = result { self?.refresh(userID: userID, ids: [contact.id]) }
            completion(result)
        }
    }

    /// Fields left nil keep their value; an empty string clears an optional field. The fields kept are read on
    /// the worker, in this user's order, so an update pipelined after another builds on the one before it.
    func update(userID: Int64, id: Int64, name: String?, phone: String?, email: String?, note: String?,
                charge: QueueCharge, completion: @escaping Completion<Contact>) {
        let logger = self.logger
        offload(userID: userID, charge, { (context: inout WorkerContext) -> Result<Contact, RosterError> in
            let store: ContactStore
            let current: Contact
            do throws(StoreError) {
                store = ContactStore(database: try context.database())
                // Another user's id reads exactly like a missing one, so ids leak nothing.
                guard let existing = try store.contact(userID: userID, id: id)?.contact else { return .failure(.notFound) }
                current = existing
            } catch {
                return .failure(error.rosterError(logger: logger, "contacts: read contact"))
            }
            let draft = ContactDraft(name: name ?? current.name, phone: phone ?? current.phone,
                                     email: email ?? current.email, note: note ?? current.note)
            do throws(ContactError) {
                try draft.validate()
            } catch {
                return .failure(error.rosterError)
            }
            do throws(StoreError) {
                let keys = ContactSearchKeys(draft: draft)
                let updated = try context.writeTurn.take { () throws(StoreError) in
                    try store.update(userID: userID, id: id, draft, keys: keys, now: SystemWallClock().nowMs())
                }
                guard let updated else { return .failure(.notFound) }
                return .success(updated.contact)
            } catch {
                return .failure(error.rosterError(logger: logger, "contacts write"))
            }
        }) { [weak self] result in
            if case .success = result { self?.refresh(userID: userID, ids: [id]) }
            completion(result)
        }
    }

    func remove(userID: Int64, id: Int64, charge: QueueCharge, completion: @escaping Completion<Void>) {
        let logger = self.logger
        offload(userID: userID, charge, { (context: inout WorkerContext) -> Result<Void, RosterError> in
            do throws(StoreError) {
                let store = ContactStore(database: try context.database())
                let removed = try context.writeTurn.take { () throws(StoreError) in try store.delete(userID: userID, id: id) }
                return removed ? .success(()) : .failure(.notFound)
            } catch {
                return .failure(error.rosterError(logger: logger, "contacts write"))
            }
        }) { [weak self] result in
            if case .success = result { self?.refresh(userID: userID, ids: [id]) }
            completion(result)
        }
    }

    /// What an import did: how many were added, how many were already there, and every rejected card or row.
    struct ImportSummary {
        let added: [Int64]
        let skipped: Int
        let errors: [ContactImportError]
    }

    /// Costs what its own rows cost (issue 12: a one-row import read the whole book to find duplicates, then made
    /// the next search rebuild the index on the loop, about 340 ms at 15k contacts): duplicates are looked up
    /// through the index on (user_id, key_folded), and only the added rows go into the search index.
    /// Its data is charged as bytes of queued work.
    func importContacts(userID: Int64, format: ContactFormat, data: String, charge: QueueCharge,
                        completion: @escaping Completion<ImportSummary>) {
        let logger = self.logger
        var charge = charge
        charge.bytes = data.utf8.count
        offload(userID: userID, charge, { context in
            let parsed = format.parse(data)
            do throws(StoreError) {
                let store = ContactStore(database: try context.database())
                var seen = Set<ContactDraft>()
                var fresh: [(ContactDraft, ContactSearchKeys)] = []
                var skipped = 0
                for imported in parsed.contacts {
                    // An exact duplicate of a contact already there (or earlier in this file) is counted, not added.
                    // Only this user's jobs write their contacts, one at a time, so the look-up holds until the insert.
                    let folded = ContactSearchKeys.foldQuery(imported.draft.name)
                    guard seen.insert(imported.draft).inserted,
                          try !store.containsDuplicate(userID: userID, of: imported.draft, folded: folded) else {
                        skipped += 1
                        continue
                    }
                    // The full keys (pinyin runs ICU, ~130 µs a Han name) only for the rows that are added.
                    fresh.append((imported.draft, ContactSearchKeys(draft: imported.draft)))
                }
                // Parsing, search keys (ICU for Han names) and look-ups are done before the turn; only the insert is in it.
                let records = try context.writeTurn.take { () throws(StoreError) in
                    try store.insertMany(userID: userID, fresh, now: SystemWallClock().nowMs())
                }
                return .success((ImportSummary(added: records.map(\.contact.id), skipped: skipped, errors: parsed.errors),
                                 records.map { (id: $0.contact.id, keys: $0.keys) }))
            } catch {
                return .failure(error.rosterError(logger: logger, "contacts write"))
            }
        }) { [weak self] result in
            switch result {
            case .success(let (summary, added)):
                if let self, !added.isEmpty {
                    // This user's jobs run one at a time, so no later write of theirs has reached the index yet.
                    self.indexes[userID]?.upsert(contentsOf: added)
                    self.onChange?(userID)
                }
                completion(.success(summary))
            case .failure(let error):
                completion(.failure(error))
            }
        }
    }

    /// Which part of an address book one `contacts.export` answer carries.
    struct ExportRequest: Sendable {
        let format: ContactFormat
        /// The page starts after this contact id; nil starts at the beginning (and a CSV file with its header).
        let after: Int64?
        /// At most this many contacts; nil asks for every one, in one answer, or `answer_too_large`.
        let contactLimit: Int?
        /// The answer line may be at most this long.
        let byteLimit: Int
        /// The request's id, written into the answer line on the worker.
        let id: JSONValue
    }

    /// What a read queued for a connection that has closed since ends with: nobody will see it, and the workers
    /// need not spend a page's reads and encoding on it (a peer that pipelined big pages and left would
    /// otherwise keep the workers from other users' writes for seconds).
    static let nobodyToAnswer = RosterError.busy(retryAfterMs: 0)

    /// Rows read from the database at a time while a page is written.
    static let exportChunk = 1_000

    /// The answer line of an export page, read and written on a worker in id order (a book of 100k contacts takes
    /// a while to write out, and nothing of that size is encoded on the loop), in the user's order of writes.
    func export(userID: Int64, _ request: ExportRequest, charge: QueueCharge, unless gone: Locked<Bool>,
                completion: @escaping Completion<[UInt8]>) {
        let logger = self.logger
        offload(userID: userID, charge, { context in
            if gone.withLock({ $0 }) { return .failure(Self.nobodyToAnswer) }
            do throws(StoreError) {
                let store = ContactStore(database: try context.database())
                var writer = ContactExportWriter(id: request.id, format: request.format, startsFile: request.after == nil,
                                                 byteLimit: request.byteLimit)
                var after = request.after ?? 0
                var more = false
                reading: while true {
                    let rows = try store.contacts(userID: userID, afterID: after, limit: Self.exportChunk)
                    for contact in rows {
                        let pageFull = request.contactLimit.map { writer.count >= $0 } ?? false
                        if pageFull || !writer.add(contact) {
                            more = true
                            break reading
                        }
                    }
                    guard let last = rows.last, rows.count == Self.exportChunk else { break }
                    after = last.id
                }
                // A client that did not ask for pages must never take a part for the whole.
                if more && request.contactLimit == nil {
                    return .failure(.answerTooLarge(size: writer.refusedLength ?? request.byteLimit + 1,
                                                    limit: request.byteLimit))
                }
                return .success(writer.finish(more: more))
            } catch {
                return .failure(error.rosterError(logger: logger, "contacts export"))
            }
        }, completion: completion)
    }

    // MARK: Errors

    private func failure(_ error: StoreError, _ operation: String) -> RosterError {
        error.rosterError(logger: logger, "contacts: \(operation)")
    }
}
