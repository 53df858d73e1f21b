import RosterCore
import RosterRuntime
import RosterStorage

// Audit entries as they commit (contract §9).
//
// RULES
//   • This daemon's entries go to the journal, with native fields (ROSTER_EVENT, ROSTER_USER, ROSTER_PEER_UID, …).
//   • Every committed entry, this daemon's or (on a shared database) another's, goes to the admin connections
//     that follow the log with a matching filter, as an `audit` event.
extension Server {
    /// Called on the loop thread for each committed entry.
    func auditCommitted(_ entry: AuditEntry, _ origin: AuditOrigin) {
        // SKELETON (issue 16): the journal line and the followers' events land with their branches.
        tellAuditFollowers(entry)
    }

    /// The followers' half: every following admin connection whose filter matches hears the entry, wherever it
    /// was written.
    func tellAuditFollowers(_ entry: AuditEntry) {
        adminAuditMethods.entryCommitted(entry)
    }
}
