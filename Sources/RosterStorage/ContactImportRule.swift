import RosterCore
import RosterRuntime

/// Which imported contacts are added, written once for every backend: a card that is an exact duplicate of a
/// contact the user has already, or of one earlier in the same file, is counted as skipped, not added. Only the
/// added ones get their full search keys (pinyin runs ICU, ~130 µs a Han name). Runs off the loop.
public enum ContactImportRule {
    /// The drafts to add, in file order with their keys, and how many were skipped. `isStored` answers whether
    /// the user has an exact duplicate already (a backend looks it up its own way); `sharing` lets a long file
    /// yield the core now and then.
    public static func sort<Failure: Error>(_ drafts: [ContactDraft], sharing: inout CoreSharing,
                                            isStored: (ContactDraft) throws(Failure) -> Bool)
        throws(Failure) -> (fresh: [(ContactDraft, ContactSearchKeys)], skipped: Int) {
        let (fresh, skipped) = try sort(drafts.map { ImportedContact(draft: $0, line: 0) }, sharing: &sharing,
                                        isStored: isStored)
        return (fresh.map { ($0.draft, $0.keys) }, skipped)
    }

    /// `sort` of imported cards, each added one keeping the UID its card named.
    public static func sort<Failure: Error>(_ contacts: [ImportedContact], sharing: inout CoreSharing,
                                            isStored: (ContactDraft) throws(Failure) -> Bool)
        throws(Failure) -> (fresh: [FreshContact], skipped: Int) {
        var seen = Set<ContactDraft>()
        var fresh: [FreshContact] = []
        var skipped = 0
        for contact in contacts {
            sharing.yieldIfDue()
            guard seen.insert(contact.draft).inserted, try !isStored(contact.draft) else {
                skipped += 1
                continue
            }
            fresh.append(FreshContact(draft: contact.draft, keys: ContactSearchKeys(draft: contact.draft),
                                      cardUID: contact.uid))
        }
        return (fresh, skipped)
    }

    /// The rows to insert: each keeps its card's UID when that is a valid uid the user holds not yet (nor an
    /// earlier card of the file), and gets a random one otherwise. `isTaken` says whether the user holds a uid;
    /// a backend that can only tell in the insert itself answers nil, and a row keeping its card's UID then
    /// carries a random `fallbackUID` for the insert to take instead where the user holds it.
    public static func uids<G: RandomNumberGenerator, Failure: Error>(
        for fresh: [FreshContact], random: inout G, isTaken: (String) throws(Failure) -> Bool?
    ) throws(Failure) -> [NewContactRow] {
        var used = Set<String>()
        var rows: [NewContactRow] = []
        rows.reserveCapacity(fresh.count)
        for contact in fresh {
            let generated = ContactUID.random(using: &random)
            var row = NewContactRow(draft: contact.draft, keys: contact.keys, uid: generated)
            if let own = contact.cardUID, ContactUID.isValid(own), !used.contains(own) {
                switch try isTaken(own) {
                case false?: row.uid = own
                case nil: (row.uid, row.fallbackUID) = (own, generated)
                case true?: break
                }
            }
            used.insert(row.uid)
            rows.append(row)
        }
        return rows
    }
}

/// An imported contact to add: its fields, its search keys, and the UID its card named.
public struct FreshContact: Sendable {
    public var draft: ContactDraft
    public var keys: ContactSearchKeys
    public var cardUID: String?
}

/// A contact to insert: its fields and keys, its uid, and the card a client sent (nil: the fields are the card).
public struct NewContactRow: Sendable {
    public var draft: ContactDraft
    public var keys: ContactSearchKeys
    public var uid: String
    public var card: String?
    /// The uid to take instead of `uid` if the user holds `uid` when the row is inserted (see `uids`).
    public var fallbackUID: String?

    public init(draft: ContactDraft, keys: ContactSearchKeys, uid: String, card: String? = nil) {
        self.draft = draft
        self.keys = keys
        self.uid = uid
        self.card = card
    }
}
