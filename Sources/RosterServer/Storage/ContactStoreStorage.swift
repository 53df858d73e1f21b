import RosterCore
import RosterRuntime
import RosterStorage
import RosterStore

/// Interim: `ContactStorage` over today's `ContactStore` and the server's storage lane, so that `ContactsService`
/// runs on the storage boundary before RosterStore's `SQLiteStorage` does. It goes once that is wired in the
/// composition root.
final class ContactStoreStorage: ContactStorage {
    private let loop: EventLoop
    private let lane: WorkerPool<WorkerContext>
    private let logger: Logger

    init(loop: EventLoop, lane: WorkerPool<WorkerContext>, logger: Logger) {
        self.loop = loop
        self.lane = lane
        self.logger = logger
    }

    private typealias Job<T> = @Sendable (ContactStore, WriteTurn) throws(StoreError) -> T

    /// Runs `job` on the lane; a store error is logged and mapped, a refusal is `.busy`.
    private func run<T: Sendable>(_ operation: String, charge: QueueCharge, order: QueueOrder?, cancelled: Locked<Bool>? = nil,
                                  _ job: @escaping Job<T>, completion: @escaping StorageCompletion<T>) {
        let logger = self.logger
        lane.run(on: loop, charge: charge, order: order, { context -> Result<T, StorageFailure> in
            if cancelled?.withLock({ $0 }) ?? false { return .failure(.busy(retryAfterMs: 0)) }
            do throws(StoreError) {
                return .success(try job(ContactStore(database: try context.database()), context.writeTurn))
            } catch {
                if error.isFull { return .failure(.full) }
                logger.error("contacts: \(operation) failed: \(error)")
                return .failure(.other)
            }
        }, refused: { .busy(retryAfterMs: $0) }, completion: completion)
    }

    func loadSearchIndex<T: Sendable>(of user: AccountID, charge: QueueCharge,
                                      build: @escaping @Sendable ([ContactIndexEntry]) -> T,
                                      completion: @escaping StorageCompletion<T>) {
        run("load contacts", charge: charge, order: .contacts(userID: user), { store, _ throws(StoreError) in
            build(try store.contacts(userID: user).map { (id: $0.contact.id, keys: $0.keys) })
        }, completion: completion)
    }

    func readContacts<T: Sendable>(_ ids: [Int64], of user: AccountID, charge: QueueCharge, cancelled: Locked<Bool>,
                                   encode: @escaping @Sendable ([Contact]) -> T,
                                   completion: @escaping StorageCompletion<T>) {
        run("read contact", charge: charge, order: nil, cancelled: cancelled, { store, _ throws(StoreError) in
            var items: [Contact] = []
            items.reserveCapacity(ids.count)
            for id in ids {
                if let record = try store.contact(userID: user, id: id) { items.append(record.contact) }
            }
            return encode(items)
        }, completion: completion)
    }

    func addContact(_ draft: ContactDraft, for user: AccountID, charge: QueueCharge,
                    completion: @escaping StorageCompletion<StoredContact>) {
        run("contacts write", charge: charge, order: .contacts(userID: user), { store, turn throws(StoreError) in
            let keys = ContactSearchKeys(draft: draft)
            return try turn.take { () throws(StoreError) in
                try store.insert(userID: user, draft, keys: keys, now: SystemWallClock().nowMs())
            }
        }, completion: completion)
    }

    func updateContact(_ id: Int64, of user: AccountID, with patch: ContactPatch, charge: QueueCharge,
                       completion: @escaping StorageCompletion<ContactUpdate>) {
        run("contacts write", charge: charge, order: .contacts(userID: user), { store, turn throws(StoreError) in
            guard let current = try store.contact(userID: user, id: id)?.contact else { return .notFound }
            let draft = patch.applied(to: current)
            do throws(ContactError) {
                try draft.validate()
            } catch {
                return .invalid(error)
            }
            let keys = ContactSearchKeys(draft: draft)
            let updated = try turn.take { () throws(StoreError) in
                try store.update(userID: user, id: id, draft, keys: keys, now: SystemWallClock().nowMs())
            }
            return updated.map(ContactUpdate.updated) ?? .notFound
        }, completion: completion)
    }

    func removeContact(_ id: Int64, of user: AccountID, charge: QueueCharge, completion: @escaping StorageCompletion<Bool>) {
        run("contacts write", charge: charge, order: .contacts(userID: user), { store, turn throws(StoreError) in
            try turn.take { () throws(StoreError) in try store.delete(userID: user, id: id) }
        }, completion: completion)
    }

    func importContacts(_ data: String, format: ContactFormat, for user: AccountID, charge: QueueCharge,
                        completion: @escaping StorageCompletion<ContactImportOutcome>) {
        run("contacts write", charge: charge, order: .contacts(userID: user), { store, turn throws(StoreError) in
            let parsed = format.parse(data)
            var seen = Set<ContactDraft>()
            var fresh: [(ContactDraft, ContactSearchKeys)] = []
            var skipped = 0
            for imported in parsed.contacts {
                // An exact duplicate of a contact already there (or earlier in this file) is counted, not added.
                // Only this user's jobs write their contacts, one at a time, so the look-up holds until the insert.
                let folded = ContactSearchKeys.foldQuery(imported.draft.name)
                guard seen.insert(imported.draft).inserted,
                      try !store.containsDuplicate(userID: user, of: imported.draft, folded: folded) else {
                    skipped += 1
                    continue
                }
                fresh.append((imported.draft, ContactSearchKeys(draft: imported.draft)))
            }
            let records = try turn.take { () throws(StoreError) in
                try store.insertMany(userID: user, fresh, now: SystemWallClock().nowMs())
            }
            return ContactImportOutcome(added: records, skipped: skipped, errors: parsed.errors)
        }, completion: completion)
    }

    /// Rows read from the database at a time while a page is written.
    private static let exportChunk = 1_000

    func exportContacts<Sink: ContactExportSink>(of user: AccountID, after: Int64, into sink: Sink, charge: QueueCharge,
                                                 cancelled: Locked<Bool>,
                                                 completion: @escaping StorageCompletion<Sink.Output>) {
        run("contacts export", charge: charge, order: .contacts(userID: user), cancelled: cancelled, { store, _ throws(StoreError) in
            var sink = sink
            var after = after
            var more = false
            reading: while true {
                let rows = try store.contacts(userID: user, afterID: after, limit: Self.exportChunk)
                for contact in rows where !sink.add(contact) {
                    more = true
                    break reading
                }
                guard let last = rows.last, rows.count == Self.exportChunk else { break }
                after = last.id
            }
            return sink.finish(more: more)
        }, completion: completion)
    }
}
