import RosterCore
import RosterRuntime
import RosterStorage

/// Contacts of one owner at a time: every query names the owner, so one user can never reach another's rows.
/// Every write is one durable transaction; an import is one transaction for all its contacts.
public struct ContactStore {
    public let database: Database

    public init(database: Database) {
        self.database = database
    }

    static let columns = """
        id, user_id, name, phone, email, note, created_at, updated_at, key_folded, key_initials, key_pinyin,
        key_pinyin_initials, key_hangul_initials, key_phone_digits, uid, revision
        """

    public func insert(userID: Int64, _ fields: ContactDraft, keys: ContactSearchKeys, now: Int64) throws(StoreError) -> StoredContact {
        try insertMany(userID: userID, [(fields, keys)], now: now)[0]
    }

    /// Stores all or nothing: a failure part-way leaves none of them. Each gets a random uid.
    /// `betweenRows` runs before each row (a long job's chance to share its core; see `CoreSharing`).
    public func insertMany(userID: Int64, _ contacts: [(ContactDraft, ContactSearchKeys)], now: Int64,
                           betweenRows: () -> Void = {}) throws(StoreError) -> [StoredContact] {
        var random = SystemRandomNumberGenerator()
        return try insertMany(userID: userID, contacts.map { NewContactRow(draft: $0.0, keys: $0.1,
                                                                             uid: ContactUID.random(using: &random)) },
                              now: now, betweenRows: betweenRows)
    }

    /// Stores all or nothing, each row under its uid (which must be free) and with the next revisions of the
    /// owner's change sequence, in order.
    public func insertMany(userID: Int64, _ contacts: [NewContactRow], now: Int64,
                           betweenRows: () -> Void = {}) throws(StoreError) -> [StoredContact] {
        guard !contacts.isEmpty else { return [] }
        do {
            return try database.transaction { () throws(StoreError) -> [StoredContact] in
                try insertRows(userID: userID, contacts, now: now, betweenRows: betweenRows)
            }
        } catch {
            throw error.relabelled("insert contact")
        }
    }

    /// `insertMany`'s rows, inside a write transaction.
    private func insertRows(userID: Int64, _ contacts: [NewContactRow], now: Int64,
                            betweenRows: () -> Void = {}) throws(StoreError) -> [StoredContact] {
        let insert = try database.cached("""
            INSERT INTO contacts(user_id, name, phone, email, note, created_at, updated_at, key_folded,
                key_initials, key_pinyin, key_pinyin_initials, key_hangul_initials, key_phone_digits,
                uid, revision, card)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        let last = try nextRevision(userID: userID, count: contacts.count)
        var revision = last - Int64(contacts.count)
        var records: [StoredContact] = []
        records.reserveCapacity(contacts.count)
        for row in contacts {
            betweenRows()
            revision += 1
            try forgetTombstone(userID: userID, uid: row.uid)
            try insert.bind(userID, at: 1)
            try bind(row.draft, row.keys, into: insert, from: 2, times: (now, now))
            try insert.bind(row.uid, at: 14)
            try insert.bind(revision, at: 15)
            try insert.bind(row.card, at: 16)
            try insert.run()
            records.append(StoredContact(contact: Contact(id: database.lastInsertRowID, draft: row.draft,
                                                          createdAt: now, updatedAt: now, uid: row.uid,
                                                          revision: revision),
                                         keys: row.keys))
        }
        return records
    }

    /// Takes `count` revisions of the owner's change sequence; the last one taken. Inside a write transaction.
    func nextRevision(userID: Int64, count: Int = 1) throws(StoreError) -> Int64 {
        let take = try database.cached("""
            INSERT INTO contact_books(user_id, revision) VALUES (?, ?)
            ON CONFLICT(user_id) DO UPDATE SET revision = revision + excluded.revision RETURNING revision
            """)
        defer { take.reset() }
        try take.bind(userID, at: 1)
        try take.bind(Int64(count), at: 2)
        return try take.step() ? take.int64(at: 0) : 0
    }

    private func forgetTombstone(userID: Int64, uid: String) throws(StoreError) {
        let forget = try database.cached("DELETE FROM contact_tombstones WHERE user_id = ? AND uid = ?")
        try forget.bind(userID, at: 1)
        try forget.bind(uid, at: 2)
        try forget.run()
    }

    /// The updated contact, or nil when `id` is not one of this owner's contacts. A card a client sent is
    /// rewritten to say the new fields (`VCard.rewritten`), keeping the rest of its bytes.
    public func update(userID: Int64, id: Int64, _ fields: ContactDraft, keys: ContactSearchKeys, now: Int64) throws(StoreError) -> StoredContact? {
        do {
            return try database.transaction { () throws(StoreError) -> StoredContact? in
                guard let existing = try card(userID: userID, where: "id = ?", id) else { return nil }
                let card = existing.sent.map { VCard.rewritten($0, from: existing.contact.draft, to: fields) }
                return try rewrite(userID: userID, existing.contact, fields, keys: keys, card: card, now: now)
            }
        } catch {
            throw error.relabelled("update contact")
        }
    }

    /// Writes `fields` and `card` over `existing` with the next revision. Inside a write transaction.
    private func rewrite(userID: Int64, _ existing: Contact, _ fields: ContactDraft, keys: ContactSearchKeys,
                         card: String?, now: Int64) throws(StoreError) -> StoredContact {
        let revision = try nextRevision(userID: userID)
        let update = try database.cached("""
            UPDATE contacts SET name = ?, phone = ?, email = ?, note = ?, created_at = ?, updated_at = ?,
                key_folded = ?, key_initials = ?, key_pinyin = ?, key_pinyin_initials = ?,
                key_hangul_initials = ?, key_phone_digits = ?, revision = ?, card = ?
            WHERE id = ? AND user_id = ?
            """)
        try bind(fields, keys, into: update, from: 1, times: (existing.createdAt, now))
        try update.bind(revision, at: 13)
        try update.bind(card, at: 14)
        try update.bind(existing.id, at: 15)
        try update.bind(userID, at: 16)
        try update.run()
        return StoredContact(contact: Contact(id: existing.id, draft: fields, createdAt: existing.createdAt,
                                              updatedAt: now, uid: existing.uid, revision: revision),
                             keys: keys)
    }

    /// Whether a contact of this owner was removed; its tombstone keeps the removal for `contacts.changes`.
    public func delete(userID: Int64, id: Int64, now: Int64 = 0) throws(StoreError) -> Bool {
        do {
            return try database.transaction { () throws(StoreError) -> Bool in
                guard let existing = try contact(userID: userID, id: id) else { return false }
                try delete(userID: userID, existing.contact, now: now)
                return true
            }
        } catch {
            throw error.relabelled("delete contact")
        }
    }

    /// Deletes `contact`, leaves its tombstone at the next revision, and forgets the owner's tombstones past their
    /// keep. Inside a write transaction.
    private func delete(userID: Int64, _ contact: Contact, now: Int64) throws(StoreError) {
        let delete = try database.cached("DELETE FROM contacts WHERE id = ? AND user_id = ?")
        try delete.bind(contact.id, at: 1)
        try delete.bind(userID, at: 2)
        try delete.run()
        let revision = try nextRevision(userID: userID)
        let tombstone = try database.cached("""
            INSERT INTO contact_tombstones(user_id, uid, revision, removed_at) VALUES (?, ?, ?, ?)
            ON CONFLICT(user_id, uid) DO UPDATE SET revision = excluded.revision, removed_at = excluded.removed_at
            """)
        try tombstone.bind(userID, at: 1)
        try tombstone.bind(contact.uid, at: 2)
        try tombstone.bind(revision, at: 3)
        try tombstone.bind(now, at: 4)
        try tombstone.run()
        let cutoff = now - ContactChangesRule.tombstoneKeepMs
        let forgotten = try database.cached("""
            UPDATE contact_books SET forgotten = max(forgotten, coalesce((SELECT max(revision) FROM contact_tombstones
                WHERE user_id = ?1 AND removed_at < ?2), 0)) WHERE user_id = ?1
            """)
        try forgotten.bind(userID, at: 1)
        try forgotten.bind(cutoff, at: 2)
        try forgotten.run()
        let prune = try database.cached("DELETE FROM contact_tombstones WHERE user_id = ? AND removed_at < ?")
        try prune.bind(userID, at: 1)
        try prune.bind(cutoff, at: 2)
        try prune.run()
    }

    // MARK: Cards and changes

    /// The owner's contact under `uid`, with the card a client sent.
    public func card(userID: Int64, uid: String) throws(StoreError) -> ContactCard? {
        try card(userID: userID, where: "uid = ?", uid)
    }

    private func card(userID: Int64, where condition: String, _ key: SQLValue) throws(StoreError) -> ContactCard? {
        let select = try database.cached("SELECT \(Self.columns), card FROM contacts WHERE user_id = ? AND \(condition)")
        defer { select.reset() }
        try select.bind(userID, at: 1)
        try select.bind(key, at: 2)
        guard try select.step() else { return nil }
        return ContactCard(contact: Self.record(select).contact, sent: select.string(at: 16))
    }

    private func card(userID: Int64, where condition: String, _ id: Int64) throws(StoreError) -> ContactCard? {
        try card(userID: userID, where: condition, .integer(id))
    }

    private func card(userID: Int64, where condition: String, _ uid: String) throws(StoreError) -> ContactCard? {
        try card(userID: userID, where: condition, .text(uid))
    }

    /// Stores `card` under `uid` with the fields read from it, when `precondition` holds for the contact there.
    public func put(userID: Int64, uid: String, card: String, content: CardContent, keys: ContactSearchKeys,
                    precondition: CardPrecondition, now: Int64) throws(StoreError) -> CardPut {
        do {
            return try database.transaction { () throws(StoreError) -> CardPut in
                let existing = try self.card(userID: userID, uid: uid)
                guard precondition.allows(current: existing?.contact.revision) else { return .preconditionFailed }
                guard let existing else {
                    let row = NewContactRow(draft: content.draft, keys: keys, uid: uid, card: card)
                    return try .created(insertRows(userID: userID, [row], now: now)[0])
                }
                return .updated(try rewrite(userID: userID, existing.contact, content.draft, keys: keys, card: card,
                                            now: now))
            }
        } catch {
            throw error.relabelled("put contact card")
        }
    }

    /// Removes the contact under `uid` when `precondition` holds.
    public func removeCard(userID: Int64, uid: String, precondition: CardPrecondition, now: Int64) throws(StoreError) -> CardRemoval {
        do {
            return try database.transaction { () throws(StoreError) -> CardRemoval in
                let existing = try contact(userID: userID, uid: uid)
                if let refusal = CardRemoval.refusal(precondition, current: existing?.revision) { return refusal }
                guard let existing else { return .notFound }
                try delete(userID: userID, existing, now: now)
                return .removed(id: existing.id)
            }
        } catch {
            throw error.relabelled("remove contact card")
        }
    }

    private func contact(userID: Int64, uid: String) throws(StoreError) -> Contact? {
        let select = try database.cached("SELECT \(Self.columns) FROM contacts WHERE user_id = ? AND uid = ?")
        defer { select.reset() }
        try select.bind(userID, at: 1)
        try select.bind(uid, at: 2)
        return try select.step() ? Self.record(select).contact : nil
    }

    /// The changes after `since` (nil: every contact), at most `limit`; see `ContactChangesRule`.
    public func changes(userID: Int64, since: Int64?, limit: Int, now: Int64) throws(StoreError) -> ContactChangesRead {
        let book = try database.cached("""
            SELECT revision, max(forgotten, coalesce((SELECT max(revision) FROM contact_tombstones
                WHERE user_id = ?1 AND removed_at < ?2), 0)) FROM contact_books WHERE user_id = ?1
            """)
        try book.bind(userID, at: 1)
        try book.bind(now - ContactChangesRule.tombstoneKeepMs, at: 2)
        let (bookRevision, watermark) = try book.step() ? (book.int64(at: 0), book.int64(at: 1)) : (0, 0)
        book.reset()
        let after = since ?? 0
        let select = try database.cached("""
            SELECT \(Self.columns) FROM contacts WHERE user_id = ? AND revision > ? ORDER BY revision LIMIT ?
            """)
        defer { select.reset() }
        try select.bind(userID, at: 1)
        try select.bind(after, at: 2)
        try select.bind(limit + 1, at: 3)
        var changed: [Contact] = []
        while try select.step() { changed.append(Self.record(select).contact) }
        var removed: [ContactTombstone] = []
        if since != nil {
            let tombstones = try database.cached("""
                SELECT uid, revision FROM contact_tombstones WHERE user_id = ? AND revision > ? ORDER BY revision LIMIT ?
                """)
            defer { tombstones.reset() }
            try tombstones.bind(userID, at: 1)
            try tombstones.bind(after, at: 2)
            try tombstones.bind(limit + 1, at: 3)
            while try tombstones.step() {
                removed.append(ContactTombstone(uid: tombstones.string(at: 0) ?? "", revision: tombstones.int64(at: 1)))
            }
        }
        return ContactChanges.read(changed: changed, removed: removed, since: since, watermark: watermark,
                                   bookRevision: bookRevision, limit: limit)
    }

    /// Whether the owner has a contact under `uid`.
    public func holdsUID(userID: Int64, _ uid: String) throws(StoreError) -> Bool {
        try contact(userID: userID, uid: uid) != nil
    }

    public func contact(userID: Int64, id: Int64) throws(StoreError) -> StoredContact? {
        let select = try database.cached("SELECT \(Self.columns) FROM contacts WHERE id = ? AND user_id = ?")
        defer { select.reset() }
        try select.bind(id, at: 1)
        try select.bind(userID, at: 2)
        return try select.step() ? Self.record(select) : nil
    }

    /// Every contact of the owner with its keys, in id order.
    public func contacts(userID: Int64) throws(StoreError) -> [StoredContact] {
        let select = try database.cached("SELECT \(Self.columns) FROM contacts WHERE user_id = ? ORDER BY id")
        defer { select.reset() }
        try select.bind(userID, at: 1)
        var records: [StoredContact] = []
        while try select.step() { records.append(Self.record(select)) }
        return records
    }

    /// The owner's search index rows, in id order: only the id and the keys, without the fields a search never reads.
    public func searchKeys(userID: Int64) throws(StoreError) -> [ContactIndexEntry] {
        let select = try database.cached("""
            SELECT id, key_folded, key_initials, key_pinyin, key_pinyin_initials, key_hangul_initials, key_phone_digits
            FROM contacts WHERE user_id = ? ORDER BY id
            """)
        defer { select.reset() }
        try select.bind(userID, at: 1)
        var entries: [ContactIndexEntry] = []
        var sharing = CoreSharing()
        while try select.step() {
            entries.append((id: select.int64(at: 0), keys: Self.keys(select, from: 1)))
            sharing.yieldIfDue()
        }
        return entries
    }

    /// Whether the owner has a contact whose fields equal `draft` exactly (as Swift compares them, so a name in
    /// another Unicode normal form is the same name). `folded` is the draft's `ContactSearchKeys.folded`: equal
    /// names fold alike, so only the rows of that folded name are read, through `contacts_user_folded`.
    public func containsDuplicate(userID: Int64, of draft: ContactDraft, folded: String) throws(StoreError) -> Bool {
        let select = try database.cached("SELECT \(Self.columns) FROM contacts WHERE user_id = ? AND key_folded = ?")
        defer { select.reset() }
        try select.bind(userID, at: 1)
        try select.bind(folded, at: 2)
        while try select.step() {
            if Self.record(select).contact.draft == draft { return true }
        }
        return false
    }

    /// Up to `limit` of the owner's contacts with an id above `afterID`, in id order: a page of an export. Ids
    /// only grow, so a page boundary stays put while contacts are added or removed around it.
    public func contacts(userID: Int64, afterID: Int64, limit: Int) throws(StoreError) -> [Contact] {
        let select = try database.cached("""
            SELECT id, name, phone, email, note, created_at, updated_at, uid, revision FROM contacts
            WHERE user_id = ? AND id > ? ORDER BY id LIMIT ?
            """)
        defer { select.reset() }
        try select.bind(userID, at: 1)
        try select.bind(afterID, at: 2)
        try select.bind(limit, at: 3)
        var contacts: [Contact] = []
        while try select.step() {
            contacts.append(Contact(id: select.int64(at: 0),
                                    draft: ContactDraft(name: select.string(at: 1) ?? "", phone: select.string(at: 2),
                                                        email: select.string(at: 3), note: select.string(at: 4)),
                                    createdAt: select.int64(at: 5), updatedAt: select.int64(at: 6),
                                    uid: select.string(at: 7), revision: select.int64(at: 8)))
        }
        return contacts
    }

    public func count(userID: Int64) throws(StoreError) -> Int {
        let select = try database.cached("SELECT count(*) FROM contacts WHERE user_id = ?")
        defer { select.reset() }
        try select.bind(userID, at: 1)
        return try select.step() ? select.int(at: 0) : 0
    }

    /// Every owner's contacts together, for `admin.stats`.
    public func totalCount() throws(StoreError) -> Int {
        let select = try database.cached("SELECT count(*) FROM contacts")
        defer { select.reset() }
        return try select.step() ? select.int(at: 0) : 0
    }

    private func bind(_ fields: ContactDraft, _ keys: ContactSearchKeys, into statement: Statement, from first: Int,
                      times: (created: Int64, updated: Int64)) throws(StoreError) {
        try statement.bind(fields.name, at: first)
        try statement.bind(fields.phone, at: first + 1)
        try statement.bind(fields.email, at: first + 2)
        try statement.bind(fields.note, at: first + 3)
        try statement.bind(times.created, at: first + 4)
        try statement.bind(times.updated, at: first + 5)
        let texts = [keys.folded, keys.initials, keys.pinyin, keys.pinyinInitials, keys.hangulInitials, keys.phoneDigits]
        for (offset, text) in texts.enumerated() { try statement.bind(text, at: first + 6 + offset) }
    }

    /// A contact and its keys from a row selecting `columns`.
    static func record(_ row: Statement) -> StoredContact {
        StoredContact(
            contact: Contact(id: row.int64(at: 0),
                             draft: ContactDraft(name: row.string(at: 2) ?? "", phone: row.string(at: 3),
                                                 email: row.string(at: 4), note: row.string(at: 5)),
                             createdAt: row.int64(at: 6), updatedAt: row.int64(at: 7), uid: row.string(at: 14),
                             revision: row.int64(at: 15)),
            keys: keys(row, from: 8))
    }

    /// The six key columns starting at `first`, in `columns`' order.
    private static func keys(_ row: Statement, from first: Int) -> ContactSearchKeys {
        ContactSearchKeys(folded: row.string(at: first) ?? "", initials: row.string(at: first + 1) ?? "",
                          pinyin: row.string(at: first + 2) ?? "", pinyinInitials: row.string(at: first + 3) ?? "",
                          hangulInitials: row.string(at: first + 4) ?? "", phoneDigits: row.string(at: first + 5) ?? "")
    }
}

