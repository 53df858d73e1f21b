import RosterCore
import RosterRuntime
import RosterStorage

// Cards and changes, as the SQLite and PostgreSQL backends keep them: every write takes the user's next revision,
// a removal leaves a tombstone, and a card a client sent is kept byte for byte.

extension InMemoryStorage {
    public func contactChanges(of user: AccountID, since: Int64?, limit: Int, charge: QueueCharge,
                               completion: @escaping StorageCompletion<ContactChangesRead>) {
        answer(.contactChanges, completion) {
            let after = since ?? 0
            let book = self.books[user] ?? (0, 0)
            let cutoff = self.clock.nowMs() - ContactChangesRule.tombstoneKeepMs
            let kept = self.tombstones[user] ?? [:]
            let watermark = max(book.forgotten, kept.values.filter { $0.removedAt < cutoff }.map(\.revision).max() ?? 0)
            let changed = self.contacts.values.filter { $0.owner == user && $0.stored.contact.revision > after }
                .map(\.stored.contact).sorted { $0.revision < $1.revision }.prefix(limit + 1)
            let removed = kept.filter { $0.value.revision > after }
                .map { ContactTombstone(uid: $0.key, revision: $0.value.revision) }
                .sorted { $0.revision < $1.revision }.prefix(limit + 1)
            return .success(ContactChanges.read(changed: Array(changed), removed: Array(removed), since: since,
                                                watermark: watermark, bookRevision: book.revision, limit: limit))
        }
    }

    public func readCards(_ uids: [String], of user: AccountID, byteLimit: Int, charge: QueueCharge,
                          completion: @escaping StorageCompletion<CardsRead>) {
        answer(.readCards, completion) {
            .success(CardsRead.reading(uids, byteLimit: byteLimit) { uid in
                self.contact(uid: uid, of: user).map { ContactCard(contact: $0.contact, sent: self.sentCards[$0.contact.id]) }
            })
        }
    }

    public func putCard(_ card: String, uid: String, precondition: CardPrecondition, for user: AccountID,
                        session: SessionGrant, charge: QueueCharge, completion: @escaping StorageCompletion<CardPut>) {
        answer(.putCard, completion) {
            guard self.holdsSession(session, user) else { return .failure(.revoked) }
            let content: CardContent
            switch VCard.read(card: card) {
            case .failure(let error): return .success(.invalid(error))
            case .success(let read): content = read
            }
            let existing = self.contact(uid: uid, of: user)
            guard precondition.allows(current: existing?.contact.revision) else { return .success(.preconditionFailed) }
            let keys = ContactSearchKeys(draft: content.draft)
            guard let existing else {
                guard self.hasRoom(for: 1),
                      let added = self.insert([NewContactRow(draft: content.draft, keys: keys, uid: uid, card: card)],
                                              for: user).first else { return .failure(.full) }
                return .success(.created(added))
            }
            let current = existing.contact
            let updated = StoredContact(contact: Contact(id: current.id, draft: content.draft, createdAt: current.createdAt,
                                                         updatedAt: self.clock.nowMs(), uid: uid,
                                                         revision: self.nextRevision(of: user)),
                                        keys: keys)
            self.contacts[current.id] = (user, updated)
            self.sentCards[current.id] = card
            return .success(.updated(updated))
        }
    }

    public func removeCard(uid: String, precondition: CardPrecondition, of user: AccountID, session: SessionGrant,
                           charge: QueueCharge, completion: @escaping StorageCompletion<CardRemoval>) {
        answer(.removeCard, completion) {
            guard self.holdsSession(session, user) else { return .failure(.revoked) }
            let existing = self.contact(uid: uid, of: user)?.contact
            if let refusal = CardRemoval.refusal(precondition, current: existing?.revision) { return .success(refusal) }
            guard let existing else { return .success(.notFound) }
            self.remove(existing, of: user)
            return .success(.removed(id: existing.id))
        }
    }
}
