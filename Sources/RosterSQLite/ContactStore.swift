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
        key_pinyin_initials, key_hangul_initials, key_phone_digits
        """

    public func insert(userID: Int64, _ fields: ContactDraft, keys: ContactSearchKeys, now: Int64) throws(StoreError) -> StoredContact {
        try insertMany(userID: userID, [(fields, keys)], now: now)[0]
    }

    /// Stores all or nothing: a failure part-way leaves none of them.
    /// `betweenRows` runs before each row (a long job's chance to share its core; see `CoreSharing`).
    public func insertMany(userID: Int64, _ contacts: [(ContactDraft, ContactSearchKeys)], now: Int64,
                           betweenRows: () -> Void = {}) throws(StoreError) -> [StoredContact] {
        guard !contacts.isEmpty else { return [] }
        do {
            return try database.transaction { () throws(StoreError) -> [StoredContact] in
                let insert = try database.cached("""
                    INSERT INTO contacts(user_id, name, phone, email, note, created_at, updated_at, key_folded,
                        key_initials, key_pinyin, key_pinyin_initials, key_hangul_initials, key_phone_digits)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
                var records: [StoredContact] = []
                records.reserveCapacity(contacts.count)
                for (fields, keys) in contacts {
                    betweenRows()
                    try insert.bind(userID, at: 1)
                    try bind(fields, keys, into: insert, from: 2, times: (now, now))
                    try insert.run()
                    records.append(StoredContact(contact: Contact(id: database.lastInsertRowID, draft: fields,
                                                                  createdAt: now, updatedAt: now),
                                                 keys: keys))
                }
                return records
            }
        } catch {
            throw error.relabelled("insert contact")
        }
    }

    /// The updated contact, or nil when `id` is not one of this owner's contacts.
    public func update(userID: Int64, id: Int64, _ fields: ContactDraft, keys: ContactSearchKeys, now: Int64) throws(StoreError) -> StoredContact? {
        do {
            return try database.transaction { () throws(StoreError) -> StoredContact? in
                guard let existing = try contact(userID: userID, id: id) else { return nil }
                let update = try database.cached("""
                    UPDATE contacts SET name = ?, phone = ?, email = ?, note = ?, created_at = ?, updated_at = ?,
                        key_folded = ?, key_initials = ?, key_pinyin = ?, key_pinyin_initials = ?,
                        key_hangul_initials = ?, key_phone_digits = ?
                    WHERE id = ? AND user_id = ?
                    """)
                try bind(fields, keys, into: update, from: 1, times: (existing.contact.createdAt, now))
                try update.bind(id, at: 13)
                try update.bind(userID, at: 14)
                try update.run()
                return StoredContact(contact: Contact(id: id, draft: fields, createdAt: existing.contact.createdAt,
                                                      updatedAt: now),
                                     keys: keys)
            }
        } catch {
            throw error.relabelled("update contact")
        }
    }

    /// Whether a contact of this owner was removed.
    public func delete(userID: Int64, id: Int64) throws(StoreError) -> Bool {
        do {
            return try database.transaction { () throws(StoreError) -> Bool in
                let delete = try database.cached("DELETE FROM contacts WHERE id = ? AND user_id = ?")
                try delete.bind(id, at: 1)
                try delete.bind(userID, at: 2)
                try delete.run()
                return database.changes > 0
            }
        } catch {
            throw error.relabelled("delete contact")
        }
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
            SELECT id, name, phone, email, note, created_at, updated_at FROM contacts
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
                                    createdAt: select.int64(at: 5), updatedAt: select.int64(at: 6)))
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
                             createdAt: row.int64(at: 6), updatedAt: row.int64(at: 7)),
            keys: keys(row, from: 8))
    }

    /// The six key columns starting at `first`, in `columns`' order.
    private static func keys(_ row: Statement, from first: Int) -> ContactSearchKeys {
        ContactSearchKeys(folded: row.string(at: first) ?? "", initials: row.string(at: first + 1) ?? "",
                          pinyin: row.string(at: first + 2) ?? "", pinyinInitials: row.string(at: first + 3) ?? "",
                          hangulInitials: row.string(at: first + 4) ?? "", phoneDigits: row.string(at: first + 5) ?? "")
    }
}
