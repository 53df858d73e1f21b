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
public protocol ContactStorage {
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
