import RosterCore
import RosterRuntime
import RosterStorage

// Contacts, on the storage workers but for small page reads. One user's writes, imports, exports and index loads
// keep their order (`QueueOrder.contacts`); page reads do not (their ids were chosen already). Search keys, parsing and encoding
// run there too, off the loop, and only the insert itself waits for the write turn.

extension SQLiteStorage {
    /// Rows read from the database at a time while an export page is written.
    static let exportChunk = 1_000
    /// A page of at most this many contacts is read on the loop's connection, before the call returns: a hundred
    /// point reads take well under a millisecond, so a typed search's page never waits in the workers' queue
    /// (nor is refused `busy` there), as it never did before the storage boundary.
    static let loopReadLimit = 100

    public func loadSearchIndex<T: Sendable>(of user: AccountID, charge: QueueCharge,
                                      build: @escaping @Sendable ([ContactIndexEntry]) -> T,
                                      completion: @escaping StorageCompletion<T>) {
        let logger = self.logger
        work(charge, order: .contacts(userID: user), { worker in
            do throws(StoreError) {
                return .success(build(try ContactStore(database: try worker.database()).searchKeys(userID: user)))
            } catch {
                return .failure(error.storageFailure(logging: logger, "contacts: load contacts"))
            }
        }, completion: completion)
    }

    public func readContacts<T: Sendable>(_ ids: [Int64], of user: AccountID, charge: QueueCharge, cancelled: Locked<Bool>,
                                   encode: @escaping @Sendable ([Contact]) -> T,
                                   completion: @escaping StorageCompletion<T>) {
        if ids.count <= Self.loopReadLimit {
            if let skipped = StorageFailure.skipped(cancelled) { return completion(.failure(skipped)) }
            return read("contacts: read contact", completion) { () throws(StoreError) in
                encode(try contactRows.contacts(ids, of: user))
            }
        }
        let logger = self.logger
        work(charge, { worker in
            if let skipped = StorageFailure.skipped(cancelled) { return .failure(skipped) }
            do throws(StoreError) {
                return .success(encode(try ContactStore(database: try worker.database()).contacts(ids, of: user)))
            } catch {
                return .failure(error.storageFailure(logging: logger, "contacts: read contact"))
            }
        }, completion: completion)
    }

    public func addContact(_ draft: ContactDraft, for user: AccountID, session: SessionGrant, charge: QueueCharge,
                    completion: @escaping StorageCompletion<StoredContact>) {
        let clock = self.clock
        let logger = self.logger
        work(charge, order: .contacts(userID: user), { worker in
            if session.isEnded { return .failure(.revoked) }
            let keys = ContactSearchKeys(draft: draft)
            let database: Database
            do throws(StoreError) { database = try worker.database() } catch {
                return .failure(error.storageFailure(logging: logger, "contacts write"))
            }
            let store = ContactStore(database: database)
            return Self.write(database, turn: worker.writeTurn, for: user, session: session, "contacts write", logging: logger) {
                () throws(StoreError) in try store.insert(userID: user, draft, keys: keys, now: clock.nowMs())
            }
        }, completion: completion)
    }

    public func updateContact(_ id: Int64, of user: AccountID, session: SessionGrant, with patch: ContactPatch,
                       charge: QueueCharge, completion: @escaping StorageCompletion<ContactUpdate>) {
        let clock = self.clock
        let logger = self.logger
        work(charge, order: .contacts(userID: user), { (worker: inout StorageWorker) -> Result<ContactUpdate, StorageFailure> in
            if session.isEnded { return .failure(.revoked) }
            let store: ContactStore
            let current: Contact
            do throws(StoreError) {
                store = ContactStore(database: try worker.database())
                guard let existing = try store.contact(userID: user, id: id)?.contact else { return .success(.notFound) }
                current = existing
            } catch {
                return .failure(error.storageFailure(logging: logger, "contacts: read contact"))
            }
            let draft = patch.applied(to: current)
            do throws(ContactError) {
                try draft.validate()
            } catch {
                return .success(.invalid(error))
            }
            let keys = ContactSearchKeys(draft: draft)
            return Self.write(store.database, turn: worker.writeTurn, for: user, session: session, "contacts write",
                              logging: logger) { () throws(StoreError) in
                try store.update(userID: user, id: id, draft, keys: keys, now: clock.nowMs())
            }.map { $0.map(ContactUpdate.updated) ?? .notFound }
        }, completion: completion)
    }

    public func removeContact(_ id: Int64, of user: AccountID, session: SessionGrant, charge: QueueCharge,
                       completion: @escaping StorageCompletion<Bool>) {
        let clock = self.clock
        let logger = self.logger
        work(charge, order: .contacts(userID: user), { worker in
            if session.isEnded { return .failure(.revoked) }
            let database: Database
            do throws(StoreError) { database = try worker.database() } catch {
                return .failure(error.storageFailure(logging: logger, "contacts write"))
            }
            let store = ContactStore(database: database)
            return Self.write(database, turn: worker.writeTurn, for: user, session: session, "contacts write", logging: logger) {
                () throws(StoreError) in try store.delete(userID: user, id: id, now: clock.nowMs())
            }
        }, completion: completion)
    }

    /// Costs what its own rows cost (a one-row import once read the whole book to find duplicates): they are
    /// looked up through the index on (user_id, key_folded), and only the added rows get their full keys.
    public func importContacts(_ data: String, format: ContactFormat, for user: AccountID, session: SessionGrant,
                        charge: QueueCharge, completion: @escaping StorageCompletion<ContactImportOutcome>) {
        let clock = self.clock
        let logger = self.logger
        var charge = charge
        charge.bytes = data.utf8.count
        work(charge, order: .contacts(userID: user), { worker in
            // An ended session's import is not even parsed: a queue of them drains at once.
            if session.isEnded { return .failure(.revoked) }
            var sharing = CoreSharing()
            let parsed = format.parse(data)
            do throws(StoreError) {
                let store = ContactStore(database: try worker.database())
                // Only this user's jobs write their contacts, one at a time, so each look-up holds until the insert.
                let (fresh, skipped) = try ContactImportRule.sort(parsed.contacts, sharing: &sharing) {
                    draft throws(StoreError) in
                    try store.containsDuplicate(userID: user, of: draft, folded: ContactSearchKeys.foldQuery(draft.name))
                }
                return Self.write(store.database, turn: worker.writeTurn, for: user, session: session, "contacts write",
                                  logging: logger) { () throws(StoreError) in
                    var random = SystemRandomNumberGenerator()
                    let rows = try ContactImportRule.uids(for: fresh, random: &random) { uid throws(StoreError) in
                        try store.holdsUID(userID: user, uid)
                    }
                    return try store.insertMany(userID: user, rows, now: clock.nowMs()) { sharing.yieldIfDue() }
                }.map { ContactImportOutcome(added: $0, skipped: skipped, errors: parsed.errors) }
            } catch {
                return .failure(error.storageFailure(logging: logger, "contacts write"))
            }
        }, completion: completion)
    }

    public func exportContacts<Sink: ContactExportSink>(of user: AccountID, after: Int64, into sink: Sink, charge: QueueCharge,
                                                 cancelled: Locked<Bool>,
                                                 completion: @escaping StorageCompletion<Sink.Output>) {
        let logger = self.logger
        work(charge, order: .contacts(userID: user), { worker in
            if let skipped = StorageFailure.skipped(cancelled) { return .failure(skipped) }
            do throws(StoreError) {
                let store = ContactStore(database: try worker.database())
                var sink = sink
                var after = after
                var sharing = CoreSharing()
                while true {
                    let rows = try store.contacts(userID: user, afterID: after, limit: Self.exportChunk)
                    switch ContactExportStep.feed(count: rows.count, chunkSize: Self.exportChunk, after: after,
                                                  into: sink, sharing: &sharing, contact: { rows[$0] }) {
                    case .finished(let output): return .success(output)
                    case .more(let next, let last): (sink, after) = (next, last)
                    }
                }
            } catch {
                return .failure(error.storageFailure(logging: logger, "contacts export"))
            }
        }, completion: completion)
    }
}

// MARK: Cards and changes

extension SQLiteStorage {
    public func contactChanges(of user: AccountID, since: Int64?, limit: Int, charge: QueueCharge,
                               completion: @escaping StorageCompletion<ContactChangesRead>) {
        let clock = self.clock
        let logger = self.logger
        work(charge, order: .contacts(userID: user), { worker in
            do throws(StoreError) {
                let store = ContactStore(database: try worker.database())
                return .success(try store.changes(userID: user, since: since, limit: limit, now: clock.nowMs()))
            } catch {
                return .failure(error.storageFailure(logging: logger, "contacts: read changes"))
            }
        }, completion: completion)
    }

    public func readCards(_ uids: [String], of user: AccountID, byteLimit: Int, charge: QueueCharge,
                          completion: @escaping StorageCompletion<CardsRead>) {
        let logger = self.logger
        work(charge, order: .contacts(userID: user), { worker in
            do throws(StoreError) {
                let store = ContactStore(database: try worker.database())
                return .success(try CardsRead.reading(uids, byteLimit: byteLimit) { uid throws(StoreError) in
                    try store.card(userID: user, uid: uid)
                })
            } catch {
                return .failure(error.storageFailure(logging: logger, "contacts: read cards"))
            }
        }, completion: completion)
    }

    public func putCard(_ card: String, uid: String, precondition: CardPrecondition, for user: AccountID,
                        session: SessionGrant, charge: QueueCharge, completion: @escaping StorageCompletion<CardPut>) {
        let clock = self.clock
        let logger = self.logger
        var charge = charge
        charge.bytes = card.utf8.count
        work(charge, order: .contacts(userID: user), { worker in
            if session.isEnded { return .failure(.revoked) }
            let content: CardContent
            switch VCard.read(card: card) {
            case .failure(let error): return .success(.invalid(error))
            case .success(let read): content = read
            }
            let keys = ContactSearchKeys(draft: content.draft)
            let database: Database
            do throws(StoreError) { database = try worker.database() } catch {
                return .failure(error.storageFailure(logging: logger, "contacts write"))
            }
            let store = ContactStore(database: database)
            return Self.write(database, turn: worker.writeTurn, for: user, session: session, "contacts write", logging: logger) {
                () throws(StoreError) in
                try store.put(userID: user, uid: uid, card: card, content: content, keys: keys, precondition: precondition,
                              now: clock.nowMs())
            }
        }, completion: completion)
    }

    public func removeCard(uid: String, precondition: CardPrecondition, of user: AccountID, session: SessionGrant,
                           charge: QueueCharge, completion: @escaping StorageCompletion<CardRemoval>) {
        let clock = self.clock
        let logger = self.logger
        work(charge, order: .contacts(userID: user), { worker in
            if session.isEnded { return .failure(.revoked) }
            let database: Database
            do throws(StoreError) { database = try worker.database() } catch {
                return .failure(error.storageFailure(logging: logger, "contacts write"))
            }
            let store = ContactStore(database: database)
            return Self.write(database, turn: worker.writeTurn, for: user, session: session, "contacts write", logging: logger) {
                () throws(StoreError) in
                try store.removeCard(userID: user, uid: uid, precondition: precondition, now: clock.nowMs())
            }
        }, completion: completion)
    }
}

extension SQLiteStorage {
    /// `body` in the write turn, in one transaction with the check that `session` still holds: `.revoked`, with
    /// nothing written, when it does not. BEGIN IMMEDIATE comes first, so no revocation commits between the
    /// check and the write.
    static func write<T>(_ database: Database, turn: WriteTurn, for user: AccountID, session: SessionGrant,
                         _ operation: String, logging logger: Logger,
                         _ body: () throws(StoreError) -> T) -> Result<T, StorageFailure> {
        do {
            return try turn.take { () throws -> Result<T, StorageFailure> in
                if session.isEnded { return .failure(.revoked) }
                guard let hash = session.tokenHash else { return .success(try body()) }
                return try database.enclosingTransaction { () throws -> Result<T, StorageFailure> in
                    guard try SessionTokenStore(database: database).holds(hash, for: user) else { return .failure(.revoked) }
                    return .success(try body())
                }
            }
        } catch {
            return .failure(storageFailure(error, operation, logging: logger))
        }
    }
}

extension ContactStore {
    /// The contacts with these ids that are `user`'s, in the order given.
    func contacts(_ ids: [Int64], of user: AccountID) throws(StoreError) -> [Contact] {
        var items: [Contact] = []
        items.reserveCapacity(ids.count)
        for id in ids {
            if let stored = try contact(userID: user, id: id) { items.append(stored.contact) }
        }
        return items
    }
}
