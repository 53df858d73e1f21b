import RosterCore
import RosterRuntime
import RosterStorage

// Contacts. One user's writes, imports, exports and index loads take their turn (`ContactTurns`); page reads do
// not (their ids were chosen already). Search keys, parsing, index builds, encoding and export pages run on the
// CPU workers; every write tells the user's other daemons (`contactsChanged`) in its own statement.

extension PostgreSQLStorage {
    /// What a user's operation asked past their share of waiting turns answers.
    static let turnsRetryAfterMs: Int64 = 100
    /// Compare-and-set rounds of an update before it gives up (each lost to another daemon's write).
    static let updateAttempts = 5

    /// Runs `operation` in `user`'s turn; it answers through the completion it is handed, which hands the turn on.
    func inTurn<T>(of user: AccountID, _ completion: @escaping StorageCompletion<T>,
                   _ operation: @escaping (_ answer: @escaping StorageCompletion<T>) -> Void) {
        guard !stopped else { return completion(.failure(StorageFailure.stopped)) }
        let queued = contactTurns.enqueue(user) { done in
            operation { result in
                completion(result)
                done()
            }
        }
        if !queued { completion(.failure(.busy(retryAfterMs: Self.turnsRetryAfterMs))) }
    }

    public func loadSearchIndex<T: Sendable>(of user: AccountID, charge: QueueCharge,
                                      build: @escaping @Sendable ([ContactIndexEntry]) -> T,
                                      completion: @escaping StorageCompletion<T>) {
        inTurn(of: user, completion) { [weak self] answer in
            guard let self else { return answer(.failure(StorageFailure.stopped)) }
            self.query(PostgreSQLQueries.searchKeys(of: user), charge: charge, "contacts: load contacts") { [weak self] result in
                guard let self else { return answer(.failure(StorageFailure.stopped)) }
                switch result {
                case .failure(let failure): answer(.failure(failure))
                case .success(let rows):
                    self.compute(charge, {
                        var sharing = CoreSharing()
                        var entries: [ContactIndexEntry] = []
                        entries.reserveCapacity(rows.rows.count)
                        for row in rows.rows {
                            guard let id = row.int(0) else { continue }
                            entries.append((id: id, keys: row.searchKeys(from: 1)))
                            sharing.yieldIfDue()
                        }
                        return .success(build(entries))
                    }, completion: answer)
                }
            }
        }
    }

    public func readContacts<T: Sendable>(_ ids: [Int64], of user: AccountID, charge: QueueCharge, cancelled: Locked<Bool>,
                                   encode: @escaping @Sendable ([Contact]) -> T,
                                   completion: @escaping StorageCompletion<T>) {
        guard !stopped else { return completion(.failure(StorageFailure.stopped)) }
        if let skipped = StorageFailure.skipped(cancelled) { return completion(.failure(skipped)) }
        query(PostgreSQLQueries.contacts(ids, of: user), charge: charge, "contacts: read contact") { [weak self] result in
            guard let self else { return completion(.failure(StorageFailure.stopped)) }
            switch result {
            case .failure(let failure): completion(.failure(failure))
            case .success(let found):
                let ordered: @Sendable () -> [Contact] = {
                    var byID: [Int64: Contact] = [:]
                    for row in found.rows { if let contact = row.contact() { byID[contact.id] = contact } }
                    return ids.compactMap { byID[$0] }
                }
                if ids.count <= Self.loopEncodeLimit { return completion(.success(encode(ordered()))) }
                self.compute(charge, { .success(encode(ordered())) }, completion: completion)
            }
        }
    }

    public func addContact(_ draft: ContactDraft, for user: AccountID, session: SessionGrant, charge: QueueCharge,
                    completion: @escaping StorageCompletion<StoredContact>) {
        inTurn(of: user, completion) { [weak self] answer in
            guard let self else { return answer(.failure(StorageFailure.stopped)) }
            if session.isEnded { return answer(.failure(.revoked)) }
            guard PGText.storable(draft) else { return answer(.failure(self.unstorable("contacts write"))) }
            self.compute(charge, force: false, { .success(ContactSearchKeys(draft: draft)) }) { [weak self] keys in
                guard let self else { return answer(.failure(StorageFailure.stopped)) }
                switch keys {
                case .failure(let failure): answer(.failure(failure))
                case .success(let keys):
                    var random = SystemRandomNumberGenerator()
                    let row = NewContactRow(draft: draft, keys: keys, uid: ContactUID.random(using: &random))
                    self.insert([row], for: user, session: session, charge: charge, "contacts write") { result in
                        answer(result.flatMap { added in added.first.map { .success($0) } ?? .failure(.other) })
                    }
                }
            }
        }
    }

    public func updateContact(_ id: Int64, of user: AccountID, session: SessionGrant, with patch: ContactPatch,
                       charge: QueueCharge, completion: @escaping StorageCompletion<ContactUpdate>) {
        inTurn(of: user, completion) { [weak self] answer in
            guard let self else { return answer(.failure(StorageFailure.stopped)) }
            if session.isEnded { return answer(.failure(.revoked)) }
            self.update(id, of: user, session: session, with: patch, charge: charge, attempt: 1, answer)
        }
    }

    /// Reads the contact as it stands, patches and validates it here, and writes it only if nobody changed it
    /// meanwhile; if another daemon did, it starts again from the new read.
    private func update(_ id: Int64, of user: AccountID, session: SessionGrant, with patch: ContactPatch, charge: QueueCharge,
                        attempt: Int,
                        _ answer: @escaping StorageCompletion<ContactUpdate>) {
        query(PostgreSQLQueries.contact(id, of: user), charge: charge, "contacts: read contact") { [weak self] read in
            guard let self else { return answer(.failure(StorageFailure.stopped)) }
            let current: Contact
            let sent: String?
            switch read {
            case .failure(let failure): return answer(.failure(failure))
            case .success(let found):
                guard let row = found.rows.first, let existing = row.contact() else { return answer(.success(.notFound)) }
                current = existing
                sent = row.text(9)
            }
            let draft = patch.applied(to: current)
            do throws(ContactError) {
                try draft.validate()
            } catch {
                return answer(.success(.invalid(error)))
            }
            guard PGText.storable(draft) else { return answer(.failure(self.unstorable("contacts write"))) }
            self.compute(charge, { .success((ContactSearchKeys(draft: draft), sent.map { VCard.rewritten($0, from: current.draft, to: draft) })) }) {
                [weak self] computed in
                guard let self else { return answer(.failure(StorageFailure.stopped)) }
                let keys: ContactSearchKeys
                let card: String?
                switch computed {
                case .failure(let failure): return answer(.failure(failure))
                case .success(let computedKeys): (keys, card) = computedKeys
                }
                let changed = self.notification(.contactsChanged(account: user))
                self.query(PostgreSQLQueries.updateContact(current, to: draft, keys: keys, card: card, of: user,
                                                           session: session, now: self.now, notification: changed),
                           charge: charge, force: true, "contacts write") { [weak self] written in
                    guard let self else { return answer(.failure(StorageFailure.stopped)) }
                    switch written {
                    case .failure(let failure): answer(.failure(failure))
                    case .success(let result):
                        guard let row = result.rows.first else { return answer(.failure(.revoked)) }
                        if let updatedAt = row.int(0) {
                            return answer(.success(.updated(StoredContact(
                                contact: Contact(id: id, draft: draft, createdAt: current.createdAt, updatedAt: updatedAt,
                                                 uid: current.uid, revision: row.int(1) ?? 0),
                                keys: keys))))
                        }
                        guard attempt < Self.updateAttempts else {
                            self.logger.warning("contacts: an update lost \(attempt) races to other writers; told to retry")
                            return answer(.failure(.busy(retryAfterMs: Self.turnsRetryAfterMs)))
                        }
                        self.update(id, of: user, session: session, with: patch, charge: charge, attempt: attempt + 1, answer)
                    }
                }
            }
        }
    }

    public func removeContact(_ id: Int64, of user: AccountID, session: SessionGrant, charge: QueueCharge,
                       completion: @escaping StorageCompletion<Bool>) {
        inTurn(of: user, completion) { [weak self] answer in
            guard let self else { return answer(.failure(StorageFailure.stopped)) }
            if session.isEnded { return answer(.failure(.revoked)) }
            self.removeCard(PostgreSQLQueries.contact(id, of: user), precondition: .none, of: user, session: session,
                            charge: charge, attempt: 1) { result in
                answer(result.map { removal in
                    switch removal {
                    case .removed: true
                    case .notFound, .preconditionFailed: false
                    }
                })
            }
        }
    }

    /// Parses off the loop, reads only the user's contacts whose folded name a card has (the only possible
    /// duplicates), decides off the loop what is new and computes its keys, and inserts it all in one transaction.
    public func importContacts(_ data: String, format: ContactFormat, for user: AccountID, session: SessionGrant,
                        charge: QueueCharge, completion: @escaping StorageCompletion<ContactImportOutcome>) {
        var charge = charge
        charge.bytes = data.utf8.count
        inTurn(of: user, completion) { [weak self] answer in
            guard let self else { return answer(.failure(StorageFailure.stopped)) }
            // An ended session's import is not even parsed: a queue of them drains at once.
            if session.isEnded { return answer(.failure(.revoked)) }
            self.compute(charge, force: false, { () -> Result<ParsedImport, StorageFailure> in
                let parsed = format.parse(data)
                var folded = Set<String>()
                var sharing = CoreSharing()
                for contact in parsed.contacts {
                    folded.insert(ContactSearchKeys.foldQuery(contact.draft.name))
                    sharing.yieldIfDue()
                }
                return .success(ParsedImport(contacts: parsed.contacts, errors: parsed.errors, folded: Array(folded)))
            }) { [weak self] parsed in
                guard let self else { return answer(.failure(StorageFailure.stopped)) }
                switch parsed {
                case .failure(let failure): answer(.failure(failure))
                case .success(let parsed): self.importParsed(parsed, for: user, session: session, charge: charge, answer)
                }
            }
        }
    }

    private func importParsed(_ parsed: ParsedImport, for user: AccountID, session: SessionGrant, charge: QueueCharge,
                              _ answer: @escaping StorageCompletion<ContactImportOutcome>) {
        guard !parsed.contacts.isEmpty else {
            return answer(.success(ContactImportOutcome(added: [], skipped: 0, errors: parsed.errors)))
        }
        guard parsed.contacts.allSatisfy({ PGText.storable($0.draft) && PGText.storable($0.uid) }) else {
            return answer(.failure(unstorable("contacts import")))
        }
        query(PostgreSQLQueries.possibleDuplicates(of: user, folded: parsed.folded), charge: charge, force: true,
              "contacts write") { [weak self] found in
            guard let self else { return answer(.failure(StorageFailure.stopped)) }
            let existing: PGResult
            switch found {
            case .failure(let failure): return answer(.failure(failure))
            case .success(let result): existing = result
            }
            self.compute(charge, { () -> Result<([NewContactRow], Int), StorageFailure> in
                var stored = Set<ContactDraft>()
                for row in existing.rows {
                    guard let name = row.text(0) else { continue }
                    stored.insert(ContactDraft(name: name, phone: row.text(1), email: row.text(2), note: row.text(3)))
                }
                var sharing = CoreSharing()
                let (fresh, skipped) = ContactImportRule.sort(parsed.contacts, sharing: &sharing) { stored.contains($0) }
                // Whether the user holds a card's UID is decided in the insert itself (`fallbackUID`).
                var random = SystemRandomNumberGenerator()
                return .success((ContactImportRule.uids(for: fresh, random: &random) { _ in nil }, skipped))
            }) { [weak self] decided in
                guard let self else { return answer(.failure(StorageFailure.stopped)) }
                switch decided {
                case .failure(let failure): answer(.failure(failure))
                case .success(let (fresh, skipped)):
                    guard !fresh.isEmpty else {
                        return answer(.success(ContactImportOutcome(added: [], skipped: skipped, errors: parsed.errors)))
                    }
                    self.insert(fresh, for: user, session: session, charge: charge, "contacts import") { result in
                        answer(result.map { ContactImportOutcome(added: $0, skipped: skipped, errors: parsed.errors) })
                    }
                }
            }
        }
    }

    /// A write of text holding a NUL, refused whole (logged without the text).
    func unstorable(_ operation: String) -> StorageFailure {
        logger.error("\(operation) refused: a field holds a NUL character, which PostgreSQL cannot store")
        return .other
    }

    /// Inserts `rows` in one transaction (in chunks of `insertChunk` rows a statement), all stamped with one now,
    /// and answers them with their ids in the order given.
    /// Every statement holds the session's token for the transaction (see `PostgreSQLQueries.sessionHeld`): the
    /// first finds it gone and inserts nothing, or holds it so that no revocation commits before this does.
    private func insert(_ rows: [NewContactRow], for user: AccountID, session: SessionGrant,
                        charge: QueueCharge, _ operation: String, completion: @escaping StorageCompletion<[StoredContact]>) {
        let changed = notification(.contactsChanged(account: user))
        let stamp: PGValue = now
        let statements = stride(from: 0, to: rows.count, by: Self.insertChunk).map { start in
            PostgreSQLQueries.insertContacts(rows[start..<min(rows.count, start + Self.insertChunk)], for: user,
                                             session: session, now: stamp, notification: changed)
        }
        query(statements, transaction: statements.count > 1, charge: charge, force: true, operation) { result in
            if case .success(let results) = result, !rows.isEmpty, results.first?.rows.isEmpty ?? true {
                return completion(.failure(.revoked))
            }
            completion(result.flatMap { results in
                var added: [StoredContact] = []
                added.reserveCapacity(rows.count)
                for (offset, inserted) in results.enumerated() {
                    // Each row's id was drawn from the sequence in the order of the VALUES list, so the ids in
                    // ascending order are the rows' in the order given.
                    let ids = inserted.rows.compactMap { row in
                        row.int(0).map { (id: $0, at: row.int(1) ?? 0, revision: row.int(2) ?? 0, uid: row.text(3)) }
                    }.sorted { $0.id < $1.id }
                    let start = offset * Self.insertChunk
                    guard ids.count == min(Self.insertChunk, rows.count - start) else { return .failure(.other) }
                    for (index, id) in ids.enumerated() {
                        let row = rows[start + index]
                        added.append(StoredContact(contact: Contact(id: id.id, draft: row.draft, createdAt: id.at,
                                                                    updatedAt: id.at, uid: id.uid ?? row.uid,
                                                                    revision: id.revision),
                                                   keys: row.keys))
                    }
                }
                return .success(added)
            })
        }
    }

    public func exportContacts<Sink: ContactExportSink>(of user: AccountID, after: Int64, into sink: Sink, charge: QueueCharge,
                                                 cancelled: Locked<Bool>,
                                                 completion: @escaping StorageCompletion<Sink.Output>) {
        inTurn(of: user, completion) { [weak self] answer in
            guard let self else { return answer(.failure(StorageFailure.stopped)) }
            if let skipped = StorageFailure.skipped(cancelled) { return answer(.failure(skipped)) }
            self.exportChunk(of: user, after: after, into: sink, charge: charge, answer)
        }
    }

    /// Reads the next rows, and fills the sink with them off the loop until it refuses one or they run out.
    private func exportChunk<Sink: ContactExportSink>(of user: AccountID, after: Int64, into sink: Sink,
                                                      charge: QueueCharge,
                                                      _ answer: @escaping StorageCompletion<Sink.Output>) {
        query(PostgreSQLQueries.contactPage(of: user, after: after, limit: Self.exportChunk), charge: charge, force: true,
              "contacts export") { [weak self] read in
            guard let self else { return answer(.failure(StorageFailure.stopped)) }
            let page: PGResult
            switch read {
            case .failure(let failure): return answer(.failure(failure))
            case .success(let result): page = result
            }
            self.compute(charge, { () -> Result<ContactExportStep<Sink>, StorageFailure> in
                var sharing = CoreSharing()
                return Result { () throws(StorageFailure) in
                    try ContactExportStep.feed(count: page.rows.count, chunkSize: Self.exportChunk, after: after,
                                               into: sink, sharing: &sharing) { index throws(StorageFailure) in
                        guard let contact = page.rows[index].contact() else { throw .other }
                        return contact
                    }
                }
            }) { [weak self] step in
                guard let self else { return answer(.failure(StorageFailure.stopped)) }
                switch step {
                case .failure(let failure): answer(.failure(failure))
                case .success(.finished(let output)): answer(.success(output))
                case .success(.more(let sink, let last)):
                    self.exportChunk(of: user, after: last, into: sink, charge: charge, answer)
                }
            }
        }
    }
}

/// An import's file as parsed off the loop: its cards in order, its rejects, and the folded names to look up.
struct ParsedImport: Sendable {
    var contacts: [ImportedContact]
    var errors: [ContactImportError]
    var folded: [String]
}

// MARK: Cards and changes

extension PostgreSQLStorage {
    public func contactChanges(of user: AccountID, since: Int64?, limit: Int, charge: QueueCharge,
                               completion: @escaping StorageCompletion<ContactChangesRead>) {
        inTurn(of: user, completion) { [weak self] answer in
            guard let self else { return answer(.failure(StorageFailure.stopped)) }
            self.query(PostgreSQLQueries.changes(of: user, since: since, limit: limit, now: self.now), transaction: true,
                       charge: charge, "contacts: read changes") { result in
                answer(result.flatMap { results in
                    guard results.count == 3 else { return .failure(.other) }
                    let book = results[0].rows.first
                    let changed = results[1].rows.compactMap { $0.contact() }
                    let removed = results[2].rows.compactMap { row in
                        row.text(0).map { ContactTombstone(uid: $0, revision: row.int(1) ?? 0) }
                    }
                    return .success(ContactChanges.read(changed: changed, removed: removed, since: since,
                                                        watermark: book?.int(1) ?? 0, bookRevision: book?.int(0) ?? 0,
                                                        limit: limit))
                })
            }
        }
    }

    public func readCards(_ uids: [String], of user: AccountID, byteLimit: Int, charge: QueueCharge,
                          completion: @escaping StorageCompletion<CardsRead>) {
        inTurn(of: user, completion) { [weak self] answer in
            guard let self else { return answer(.failure(StorageFailure.stopped)) }
            self.readCardChunk(uids[...], of: user, byteLimit: byteLimit, charge: charge, read: CardsRead(cards: [], unread: []),
                               answer)
        }
    }

    /// Reads the cards a chunk at a time (a chunk of big cards must not all be held at once), until the limit.
    private func readCardChunk(_ uids: ArraySlice<String>, of user: AccountID, byteLimit: Int, charge: QueueCharge,
                               read: CardsRead, _ answer: @escaping StorageCompletion<CardsRead>) {
        guard !uids.isEmpty else { return answer(.success(read)) }
        let chunk = Array(uids.prefix(Self.cardChunk))
        query(PostgreSQLQueries.cards(chunk, of: user), charge: charge, "contacts: read cards") { [weak self] result in
            guard let self else { return answer(.failure(StorageFailure.stopped)) }
            switch result {
            case .failure(let failure): return answer(.failure(failure))
            case .success(let found):
                var byUID: [String: ContactCard] = [:]
                for row in found.rows {
                    if let contact = row.contact() { byUID[contact.uid] = ContactCard(contact: contact, sent: row.text(9)) }
                }
                let spent = read.cards.reduce(0) { $0 + $1.text.utf8.count }
                var next = CardsRead.reading(chunk, byteLimit: byteLimit - spent) { byUID[$0] }
                if !read.cards.isEmpty, let first = next.cards.first, spent + first.text.utf8.count > byteLimit {
                    return answer(.success(CardsRead(cards: read.cards, unread: Array(uids))))
                }
                next.cards = read.cards + next.cards
                if !next.unread.isEmpty {
                    next.unread += uids.dropFirst(chunk.count)
                    return answer(.success(next))
                }
                self.readCardChunk(uids.dropFirst(chunk.count), of: user, byteLimit: byteLimit, charge: charge, read: next,
                                   answer)
            }
        }
    }

    /// Uids read a statement at a time by `readCards`.
    static let cardChunk = 50

    public func putCard(_ card: String, uid: String, precondition: CardPrecondition, for user: AccountID,
                        session: SessionGrant, charge: QueueCharge, completion: @escaping StorageCompletion<CardPut>) {
        var charge = charge
        charge.bytes = card.utf8.count
        inTurn(of: user, completion) { [weak self] answer in
            guard let self else { return answer(.failure(StorageFailure.stopped)) }
            if session.isEnded { return answer(.failure(.revoked)) }
            self.compute(charge, force: false, { () -> Result<Result<(CardContent, ContactSearchKeys), CardError>, StorageFailure> in
                .success(VCard.read(card: card).map { ($0, ContactSearchKeys(draft: $0.draft)) })
            }) { [weak self] read in
                guard let self else { return answer(.failure(StorageFailure.stopped)) }
                switch read {
                case .failure(let failure): answer(.failure(failure))
                case .success(.failure(let error)): answer(.success(.invalid(error)))
                case .success(.success(let (content, keys))):
                    guard PGText.storable(content.draft), PGText.storable(uid) else {
                        return answer(.success(.invalid(.nulCharacter)))
                    }
                    self.putCard(card, uid: uid, content: content, keys: keys, precondition: precondition, for: user,
                                 session: session, charge: charge, attempt: 1, answer)
                }
            }
        }
    }

    /// Reads the contact under `uid`, decides on the precondition, and writes only if nobody wrote it meanwhile
    /// (compare and set on its revision, or an insert that finds the uid free); if another daemon did, it starts
    /// again from the new read. So a put with `if_match` is atomic per contact, across daemons too.
    private func putCard(_ card: String, uid: String, content: CardContent, keys: ContactSearchKeys,
                         precondition: CardPrecondition, for user: AccountID, session: SessionGrant, charge: QueueCharge,
                         attempt: Int, _ answer: @escaping StorageCompletion<CardPut>) {
        query(PostgreSQLQueries.contact(uid: uid, of: user), charge: charge, "contacts: read contact") { [weak self] read in
            guard let self else { return answer(.failure(StorageFailure.stopped)) }
            let current: Contact?
            switch read {
            case .failure(let failure): return answer(.failure(failure))
            case .success(let found): current = found.rows.first?.contact()
            }
            guard precondition.allows(current: current?.revision) else { return answer(.success(.preconditionFailed)) }
            let retry = { [weak self] in
                guard let self else { return answer(.failure(StorageFailure.stopped)) }
                guard attempt < Self.updateAttempts else {
                    self.logger.warning("contacts: a card put lost \(attempt) races to other writers; told to retry")
                    return answer(.failure(.busy(retryAfterMs: Self.turnsRetryAfterMs)))
                }
                self.putCard(card, uid: uid, content: content, keys: keys, precondition: precondition, for: user,
                             session: session, charge: charge, attempt: attempt + 1, answer)
            }
            guard let current else {
                let row = NewContactRow(draft: content.draft, keys: keys, uid: uid, card: card)
                let changed = self.notification(.contactsChanged(account: user))
                return self.query(PostgreSQLQueries.insertContacts([row][...], for: user, session: session, now: self.now,
                                                                   notification: changed),
                                  charge: charge, force: true, "contacts write") { written in
                    switch written {
                    case .failure(let failure): answer(.failure(failure))
                    case .success(let result):
                        guard let inserted = result.rows.first, let id = inserted.int(0) else { return retry() }
                        let at = inserted.int(1) ?? 0
                        answer(.success(.created(StoredContact(
                            contact: Contact(id: id, draft: content.draft, createdAt: at, updatedAt: at, uid: uid,
                                             revision: inserted.int(2) ?? 0),
                            keys: keys))))
                    }
                }
            }
            let changed = self.notification(.contactsChanged(account: user))
            self.query(PostgreSQLQueries.updateContact(current, to: content.draft, keys: keys, card: card, of: user,
                                                       session: session, now: self.now, notification: changed),
                       charge: charge, force: true, "contacts write") { written in
                switch written {
                case .failure(let failure): answer(.failure(failure))
                case .success(let result):
                    guard let row = result.rows.first else { return answer(.failure(.revoked)) }
                    guard let updatedAt = row.int(0) else { return retry() }
                    answer(.success(.updated(StoredContact(
                        contact: Contact(id: current.id, draft: content.draft, createdAt: current.createdAt,
                                         updatedAt: updatedAt, uid: uid, revision: row.int(1) ?? 0),
                        keys: keys))))
                }
            }
        }
    }

    public func removeCard(uid: String, precondition: CardPrecondition, of user: AccountID, session: SessionGrant,
                           charge: QueueCharge, completion: @escaping StorageCompletion<CardRemoval>) {
        inTurn(of: user, completion) { [weak self] answer in
            guard let self else { return answer(.failure(StorageFailure.stopped)) }
            if session.isEnded { return answer(.failure(.revoked)) }
            self.removeCard(PostgreSQLQueries.contact(uid: uid, of: user), precondition: precondition, of: user,
                            session: session, charge: charge, attempt: 1, answer)
        }
    }

    /// Reads the contact `find` finds, decides on the precondition, and removes it only if nobody wrote it
    /// meanwhile; if another daemon did, it starts again from the new read.
    func removeCard(_ find: PGStatement, precondition: CardPrecondition, of user: AccountID, session: SessionGrant,
                    charge: QueueCharge, attempt: Int, _ answer: @escaping StorageCompletion<CardRemoval>) {
        query(find, charge: charge, "contacts: read contact") { [weak self] read in
            guard let self else { return answer(.failure(StorageFailure.stopped)) }
            let current: Contact?
            switch read {
            case .failure(let failure): return answer(.failure(failure))
            case .success(let found): current = found.rows.first?.contact()
            }
            if let refusal = CardRemoval.refusal(precondition, current: current?.revision) { return answer(.success(refusal)) }
            guard let current else { return answer(.success(.notFound)) }
            let changed = self.notification(.contactsChanged(account: user))
            self.query(PostgreSQLQueries.removeContact(current, of: user, session: session, now: self.now,
                                                       notification: changed),
                       charge: charge, force: true, "contacts write") { [weak self] written in
                guard let self else { return answer(.failure(StorageFailure.stopped)) }
                switch written {
                case .failure(let failure): answer(.failure(failure))
                case .success(let result):
                    // No row: the session's token was gone; one row says whether the contact was removed.
                    guard let row = result.rows.first else { return answer(.failure(.revoked)) }
                    if row.bool(0) == true { return answer(.success(.removed(id: current.id))) }
                    guard attempt < Self.updateAttempts else {
                        self.logger.warning("contacts: a removal lost \(attempt) races to other writers; told to retry")
                        return answer(.failure(.busy(retryAfterMs: Self.turnsRetryAfterMs)))
                    }
                    self.removeCard(find, precondition: precondition, of: user, session: session, charge: charge,
                                    attempt: attempt + 1, answer)
                }
            }
        }
    }
}
