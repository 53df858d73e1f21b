import RosterCore
import RosterRuntime

/// A contact as stored: the contact and the search keys written with it (so an index never recomputes them).
public struct StoredContact: Equatable, Sendable {
    public var contact: Contact
    public var keys: ContactSearchKeys

    public init(contact: Contact, keys: ContactSearchKeys) {
        self.contact = contact
        self.keys = keys
    }
}

/// One row of a user's search index: what `ContactIndex` is built from.
public typealias ContactIndexEntry = (id: Int64, keys: ContactSearchKeys)

/// `contacts.update`'s change: a nil field keeps its value, an empty string clears an optional one.
public struct ContactPatch: Equatable, Sendable {
    public var name: String?
    public var phone: String?
    public var email: String?
    public var note: String?

    public init(name: String?, phone: String?, email: String?, note: String?) {
        self.name = name
        self.phone = phone
        self.email = email
        self.note = note
    }

    /// The draft this patch makes of `current`.
    public func applied(to current: Contact) -> ContactDraft {
        ContactDraft(name: name ?? current.name, phone: phone ?? current.phone,
                     email: email ?? current.email, note: note ?? current.note)
    }
}

/// What an update found: another user's id reads exactly like a missing one, so ids leak nothing.
public enum ContactUpdate: Equatable, Sendable {
    case updated(StoredContact)
    case notFound
    /// The patched contact breaks a contact rule; nothing was written.
    case invalid(ContactError)
}

/// What an import did: the contacts added (in file order), how many were exact duplicates of one already there
/// or earlier in the file, and every rejected card or row.
public struct ContactImportOutcome: Equatable, Sendable {
    public var added: [StoredContact]
    public var skipped: Int
    public var errors: [ContactImportError]

    public init(added: [StoredContact], skipped: Int, errors: [ContactImportError]) {
        self.added = added
        self.skipped = skipped
        self.errors = errors
    }
}

/// Where an export page is written, contact by contact, off the loop: the backend reads in id order and stops
/// at the first contact the sink refuses.
public protocol ContactExportSink: Sendable {
    associatedtype Output: Sendable
    /// Takes the next contact; false when the page is full, leaving the sink as it was.
    mutating func add(_ contact: Contact) -> Bool
    /// The finished page; `more` says whether contacts remain after it.
    mutating func finish(more: Bool) -> Output
}

/// Every user's contacts. Calls that write one user's contacts, import them, export them or load their search index
/// complete in the order they were made, so a pipelined `add` then `remove` never swap, and an index holds exactly
/// the writes answered before it. Only the owner's id reaches a contact: another user's id reads as missing.
public protocol ContactStorage: ContactCardStorage {
    /// A user's whole search index, with `build` run on what was read, off the loop (100,000 contacts must not
    /// stall other connections). In order with the user's writes: it sees those made before it, and none after.
    func loadSearchIndex<T: Sendable>(of user: AccountID, build: @escaping @Sendable ([ContactIndexEntry]) -> T,
                                      completion: @escaping StorageCompletion<T>)

    /// The contacts with these ids that are still the user's, in the order given, with `encode` run on them off
    /// the loop (a page of 1,000 is too big to encode there). A read: it keeps no order with the user's writes.
    /// When `cancelled` is set before the read starts, it is skipped and answers `.busy(retryAfterMs: 0)`.
    func readContacts<T: Sendable>(_ ids: [Int64], of user: AccountID, cancelled: Locked<Bool>,
                                   encode: @escaping @Sendable ([Contact]) -> T,
                                   completion: @escaping StorageCompletion<T>)

    // Each write below is made for `session`: when its turn comes and the session has ended, it writes nothing and
    // answers `.revoked` (see `SessionGrant`).

    /// Adds a validated draft, with its search keys computed off the loop.
    func addContact(_ draft: ContactDraft, for user: AccountID, session: SessionGrant,
                    completion: @escaping StorageCompletion<StoredContact>)

    /// Applies `patch` to the contact as it stands when this call's turn comes, validates, and writes it.
    func updateContact(_ id: Int64, of user: AccountID, session: SessionGrant, with patch: ContactPatch,
                       completion: @escaping StorageCompletion<ContactUpdate>)

    /// Removes a contact; whether it was the user's.
    func removeContact(_ id: Int64, of user: AccountID, session: SessionGrant,
                       completion: @escaping StorageCompletion<Bool>)

    /// Parses `data` and adds what is not an exact duplicate, off the loop and in one transaction. The
    /// data's size is charged to the queue's byte budget while the import waits and runs.
    func importContacts(_ data: String, format: ContactFormat, for user: AccountID, session: SessionGrant,
                        completion: @escaping StorageCompletion<ContactImportOutcome>)

    /// Writes the user's contacts with ids above `after` into `sink`, in id order, until it refuses one.
    /// When `cancelled` is set before the export starts, it is skipped and answers `.busy(retryAfterMs: 0)`.
    func exportContacts<Sink: ContactExportSink>(of user: AccountID, after: Int64, into sink: Sink,
                                                 cancelled: Locked<Bool>,
                                                 completion: @escaping StorageCompletion<Sink.Output>)
}

// MARK: Cards and changes (CardDAV)

/// What a card put or removal requires of the contact as it stands.
public enum CardPrecondition: Equatable, Sendable {
    /// Nothing: a put creates or replaces, a removal removes.
    case none
    /// The contact exists and its etag is this one (HTTP If-Match).
    case ifMatch(String)
    /// No contact has the uid (HTTP If-None-Match: *).
    case ifNoneMatch

    /// Whether a write may go ahead over the contact at `revision` (nil: no contact has the uid).
    public func allows(current revision: Int64?) -> Bool {
        switch self {
        case .none: true
        case .ifMatch(let etag): revision != nil && ContactRevision.revision(etag: etag) == revision
        case .ifNoneMatch: revision == nil
        }
    }
}

/// What a card put did.
public enum CardPut: Equatable, Sendable {
    case created(StoredContact)
    case updated(StoredContact)
    /// The precondition did not hold; nothing was written.
    case preconditionFailed
    /// The card was refused (see `VCard.read(card:)`); nothing was written.
    case invalid(CardError)
}

/// What a removal by uid did.
public enum CardRemoval: Equatable, Sendable {
    /// Removed: the contact's id, for the search index.
    case removed(id: Int64)
    case notFound
    case preconditionFailed
}

extension CardRemoval {
    /// What a removal answers without removing anything, or nil when it removes the contact at `revision`: a
    /// missing contact is `notFound`, or `preconditionFailed` when an etag was required of it.
    public static func refusal(_ precondition: CardPrecondition, current revision: Int64?) -> CardRemoval? {
        guard let revision else { return precondition == .none || precondition == .ifNoneMatch ? .notFound : .preconditionFailed }
        return precondition.allows(current: revision) || precondition == .ifNoneMatch ? nil : .preconditionFailed
    }
}

/// Cards read by uid, and the uids left unread when the byte limit was reached.
public struct CardsRead: Equatable, Sendable {
    public var cards: [ContactCard]
    public var unread: [String]

    public init(cards: [ContactCard], unread: [String]) {
        self.cards = cards
        self.unread = unread
    }

    /// Reads `uids` in order through `card` until the texts read hold more than `byteLimit` bytes.
    public static func reading<Failure: Error>(_ uids: [String], byteLimit: Int,
                                               card: (String) throws(Failure) -> ContactCard?) throws(Failure) -> CardsRead {
        var read = CardsRead(cards: [], unread: [])
        var bytes = 0
        for (index, uid) in uids.enumerated() {
            guard let found = try card(uid) else { continue }
            let size = found.text.utf8.count
            if !read.cards.isEmpty, bytes + size > byteLimit {
                read.unread = Array(uids[index...])
                break
            }
            bytes += size
            read.cards.append(found)
        }
        return read
    }
}

/// A removed contact's trace, kept `ContactChangesRule.tombstoneKeepMs` so that a sync hears of the removal.
public struct ContactTombstone: Equatable, Sendable {
    public var uid: String
    public var revision: Int64

    public init(uid: String, revision: Int64) {
        self.uid = uid
        self.revision = revision
    }
}

/// One answer of `contacts.changes`: the contacts written and the uids removed after the asked revision, in
/// revision order, and the revision to ask from next.
public struct ContactChanges: Equatable, Sendable {
    public var changed: [Contact]
    public var removed: [String]
    public var revision: Int64
    /// More changes follow `revision`: ask again from it.
    public var more: Bool

    public init(changed: [Contact], removed: [String], revision: Int64, more: Bool) {
        self.changed = changed
        self.removed = removed
        self.revision = revision
        self.more = more
    }
}

/// What a changes read found: the changes, or a revision older than the tombstones still kept.
public enum ContactChangesRead: Equatable, Sendable {
    case changes(ContactChanges)
    /// Removals after that revision may have been forgotten: the client must sync from scratch.
    case expired
}

/// The rules of the change sequence no backend repeats.
public enum ContactChangesRule {
    /// How long a removal's tombstone is kept: 90 days.
    public static let tombstoneKeepMs: Int64 = 90 * 24 * 3_600 * 1_000

    /// Whether a sync from `since` may have missed a removal: `since` is below the newest revision of a tombstone
    /// forgotten or past its keep (`watermark`), or beyond the book's own revision (another book's token).
    public static func isExpired(since: Int64, watermark: Int64, bookRevision: Int64) -> Bool {
        since < watermark || since > bookRevision
    }

    /// The page of at most `limit` changes after `since` from the contacts and tombstones a backend read (each
    /// in revision order, at most `limit + 1` of each, all above `since`), the book's revision now. Without
    /// `since` (a full sync) tombstones are none of the client's business.
    public static func page(changed: [Contact], removed: [ContactTombstone], since: Int64?, bookRevision: Int64,
                            limit: Int) -> ContactChanges {
        var contacts = changed[...]
        var tombstones = (since == nil ? [] : removed)[...]
        var page = ContactChanges(changed: [], removed: [], revision: since ?? 0, more: false)
        var taken = 0
        while taken < limit, contacts.first != nil || tombstones.first != nil {
            if let contact = contacts.first, tombstones.first.map({ contact.revision < $0.revision }) ?? true {
                page.changed.append(contact)
                page.revision = max(page.revision, contact.revision)
                contacts = contacts.dropFirst()
            } else if let tombstone = tombstones.first {
                page.removed.append(tombstone.uid)
                page.revision = max(page.revision, tombstone.revision)
                tombstones = tombstones.dropFirst()
            }
            taken += 1
        }
        page.more = !contacts.isEmpty || !tombstones.isEmpty
        if !page.more { page.revision = max(page.revision, bookRevision) }
        return page
    }
}

/// Every user's contacts by uid, for CardDAV: cards as sent, and the change sequence. Each call keeps the order
/// of the user's writes (as `ContactStorage`'s writes do), and each write takes the next revision of the user's
/// sequence, so that `contacts.changes` never skips a write (also across daemons sharing a database).
public protocol ContactCardStorage {
    /// The changes after revision `since` (nil: every contact, a full sync), at most `limit` of them.
    func contactChanges(of user: AccountID, since: Int64?, limit: Int, completion: @escaping StorageCompletion<ContactChangesRead>)

    /// The cards of the user's contacts with these uids, in the order given (uids without one are left out),
    /// until their texts hold more than `byteLimit` bytes (the first is always read): the uids not read then
    /// are `unread`.
    func readCards(_ uids: [String], of user: AccountID, byteLimit: Int, completion: @escaping StorageCompletion<CardsRead>)

    /// Reads `card` (off the loop) and, when `precondition` holds for the contact under `uid` as it stands in this
    /// call's turn, stores it byte for byte under `uid` with the fields taken from it. Atomic per contact.
    func putCard(_ card: String, uid: String, precondition: CardPrecondition, for user: AccountID,
                 session: SessionGrant, completion: @escaping StorageCompletion<CardPut>)

    /// Removes the contact under `uid` when `precondition` holds, leaving a tombstone.
    func removeCard(uid: String, precondition: CardPrecondition, of user: AccountID, session: SessionGrant,
                    completion: @escaping StorageCompletion<CardRemoval>)
}

extension ContactChanges {
    /// The page a backend answers from what it read, or `.expired`; see `ContactChangesRule`.
    public static func read(changed: [Contact], removed: [ContactTombstone], since: Int64?, watermark: Int64,
                            bookRevision: Int64, limit: Int) -> ContactChangesRead {
        if let since, ContactChangesRule.isExpired(since: since, watermark: watermark, bookRevision: bookRevision) {
            return .expired
        }
        return .changes(ContactChangesRule.page(changed: changed, removed: removed, since: since,
                                                bookRevision: bookRevision, limit: limit))
    }
}
