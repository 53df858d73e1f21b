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
        var seen = Set<ContactDraft>()
        var fresh: [(ContactDraft, ContactSearchKeys)] = []
        var skipped = 0
        for draft in drafts {
            sharing.yieldIfDue()
            guard seen.insert(draft).inserted, try !isStored(draft) else {
                skipped += 1
                continue
            }
            fresh.append((draft, ContactSearchKeys(draft: draft)))
        }
        return (fresh, skipped)
    }
}
