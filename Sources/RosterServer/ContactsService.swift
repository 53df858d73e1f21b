import RosterCore
import RosterStore

/// Every user's contacts as the loop sees them: an in-memory search index per logged-in user (built from the
/// keys stored with each row), reads on the loop, and durable writes on the worker pool. Each change ends with
/// `onChange(userID)`, so open contacts forms of that user, on any connection, get fresh results.
final class ContactsService {
    typealias Completion<T> = (Result<T, RosterError>) -> Void

    private let store: ContactStore
    private let pool: WorkerPool<WorkerContext>
    private let loop: EventLoop
    private let logger: Logger
    private var indexes: [Int64: ContactIndex] = [:]
    var onChange: ((Int64) -> Void)?

    init(loop: EventLoop, database: Database, pool: WorkerPool<WorkerContext>, logger: Logger) {
        self.loop = loop
        self.store = ContactStore(database: database)
        self.pool = pool
        self.logger = logger
    }

    // MARK: Reads on the loop

    /// Search results (or the whole list for an empty query), best first, with the page's contacts.
    func search(userID: Int64, query: String, limit: Int, offset: Int) throws(RosterError) -> (items: [Contact], total: Int) {
        let index = try loadedIndex(userID)
        let page = query.isEmpty ? index.list(limit: limit, offset: offset)
                                 : index.search(query: query, limit: limit, offset: offset)
        var items: [Contact] = []
        items.reserveCapacity(page.ids.count)
        for id in page.ids {
            do {
                if let record = try store.contact(userID: userID, id: id) { items.append(record.contact) }
            } catch {
                throw failure(error, "read contact")
            }
        }
        return (items, page.total)
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

    /// After a write committed, the row as it now stands decides the index (two writes may finish out of order).
    private func refresh(userID: Int64, ids: [Int64]) {
        guard indexes[userID] != nil else { return onChange?(userID) ?? () }
        for id in ids {
            if let record = try? store.contact(userID: userID, id: id) {
                indexes[userID]?.upsert(id: id, keys: record.keys)
            } else {
                indexes[userID]?.remove(id: id)
            }
        }
        onChange?(userID)
    }

    // MARK: Writes on the pool

    private func offload<T>(_ job: @escaping @Sendable (inout WorkerContext) -> Result<T, RosterError>,
                            completion: @escaping Completion<T>) {
        pool.run(on: loop, job, completion: completion)
    }

    func add(userID: Int64, _ draft: ContactDraft, completion: @escaping Completion<Contact>) {
        do throws(ContactError) {
            try draft.validate()
        } catch {
            return completion(.failure(error.rosterError))
        }
        let logger = self.logger
        offload({ context in
            do throws(StoreError) {
                let keys = ContactSearchKeys(draft: draft)
                let record = try ContactStore(database: try context.database())
                    .insert(userID: userID, draft, keys: keys, now: WallClock.nowMs())
                return .success(record.contact)
            } catch {
                return .failure(error.rosterError(logger: logger, "contacts write"))
            }
        }) { [weak self] result in
            if case .success(let contact) = result { self?.refresh(userID: userID, ids: [contact.id]) }
            completion(result)
        }
    }

    /// Fields left nil keep their value; an empty string clears an optional field.
    func update(userID: Int64, id: Int64, name: String?, phone: String?, email: String?, note: String?,
                completion: @escaping Completion<Contact>) {
        let existing: ContactRecord?
        do {
            existing = try store.contact(userID: userID, id: id)
        } catch {
            return completion(.failure(failure(error, "read contact")))
        }
        // Another user's id reads exactly like a missing one, so ids leak nothing.
        guard let current = existing?.contact else { return completion(.failure(.notFound)) }
        let draft = ContactDraft(name: name ?? current.name, phone: phone ?? current.phone,
                                 email: email ?? current.email, note: note ?? current.note)
        do throws(ContactError) {
            try draft.validate()
        } catch {
            return completion(.failure(error.rosterError))
        }
        let logger = self.logger
        offload({ (context: inout WorkerContext) -> Result<Contact, RosterError> in
            do throws(StoreError) {
                let updated = try ContactStore(database: try context.database())
                    .update(userID: userID, id: id, draft, keys: ContactSearchKeys(draft: draft), now: WallClock.nowMs())
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

    func remove(userID: Int64, id: Int64, completion: @escaping Completion<Void>) {
        let logger = self.logger
        offload({ (context: inout WorkerContext) -> Result<Void, RosterError> in
            do throws(StoreError) {
                let removed = try ContactStore(database: try context.database()).delete(userID: userID, id: id)
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

    func importContacts(userID: Int64, format: ContactFormat, data: String, completion: @escaping Completion<ImportSummary>) {
        let logger = self.logger
        offload({ context in
            let parsed = format.parse(data)
            do throws(StoreError) {
                let store = ContactStore(database: try context.database())
                var known = Set(try store.contacts(userID: userID).map(\.contact.draft))
                var fresh: [(ContactDraft, ContactSearchKeys)] = []
                var skipped = 0
                for imported in parsed.contacts {
                    // An exact duplicate of a contact already there (or earlier in this file) is counted, not added.
                    guard known.insert(imported.draft).inserted else {
                        skipped += 1
                        continue
                    }
                    fresh.append((imported.draft, ContactSearchKeys(draft: imported.draft)))
                }
                let records = try store.insertMany(userID: userID, fresh, now: WallClock.nowMs())
                return .success(ImportSummary(added: records.map(\.contact.id), skipped: skipped, errors: parsed.errors))
            } catch {
                return .failure(error.rosterError(logger: logger, "contacts write"))
            }
        }) { [weak self] result in
            if case .success(let summary) = result, !summary.added.isEmpty {
                self?.indexes[userID] = nil
                self?.onChange?(userID)
            }
            completion(result)
        }
    }

    /// Every contact of the user in list order, serialized on a worker (100k contacts take a while to write out).
    func export(userID: Int64, format: ContactFormat, completion: @escaping Completion<String>) {
        let logger = self.logger
        offload({ context in
            do throws(StoreError) {
                let records = try ContactStore(database: try context.database()).contacts(userID: userID)
                let index = ContactIndex(records.map { (id: $0.contact.id, keys: $0.keys) })
                let byID = Dictionary(uniqueKeysWithValues: records.map { ($0.contact.id, $0.contact) })
                let ordered = index.list(limit: records.count, offset: 0).ids.compactMap { byID[$0] }
                return .success(format.serialize(ordered))
            } catch {
                return .failure(error.rosterError(logger: logger, "contacts write"))
            }
        }, completion: completion)
    }

    // MARK: Errors

    private func failure(_ error: StoreError, _ operation: String) -> RosterError {
        error.rosterError(logger: logger, "contacts: \(operation)")
    }
}

/// The two interchange formats of `contacts.import` and `contacts.export`.
enum ContactFormat: String {
    case vcard
    case csv

    func parse(_ data: String) -> ContactImportResult {
        switch self {
        case .vcard: VCard.parse(data)
        case .csv: ContactCSV.parse(data)
        }
    }

    func serialize(_ contacts: [Contact]) -> String {
        switch self {
        case .vcard: VCard.serialize(contacts)
        case .csv: ContactCSV.serialize(contacts)
        }
    }
}
