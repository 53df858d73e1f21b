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
        if origin == .here { journal(entry) }
        tellAuditFollowers(entry)
    }

    /// This daemon's entry as a journal line: `audit: <event> <outcome>`, its fields native, so
    /// `journalctl ROSTER_EVENT=login ROSTER_OUTCOME=failed` finds them. An entry holds no secret, nor does this.
    func journal(_ entry: AuditEntry) {
        let record = entry.record
        var fields = [("ROSTER_EVENT", record.event.rawValue)]
        if let username = record.username { fields.append(("ROSTER_USER", username)) }
        fields.append(("ROSTER_PEER_UID", String(record.peer.uid)))
        fields.append(("ROSTER_PEER_PID", String(record.peer.pid)))
        if let client = record.peer.client { fields.append(("ROSTER_CLIENT", client)) }
        if let remote = record.peer.remote { fields.append(("ROSTER_REMOTE", remote)) }
        fields.append(("ROSTER_OUTCOME", record.outcome.rawValue))
        if let reason = record.reason { fields.append(("ROSTER_REASON", reason)) }
        if record.suppressed > 0 { fields.append(("ROSTER_SUPPRESSED", String(record.suppressed))) }
        fields.append(("ROSTER_AUDIT_ID", String(entry.id)))
        logger.info("audit: \(record.event.rawValue) \(record.outcome.rawValue)", fields)
    }

    /// The followers' half: every following admin connection whose filter matches hears the entry, wherever it
    /// was written.
    func tellAuditFollowers(_ entry: AuditEntry) {
        adminAuditMethods.entryCommitted(entry)
    }
}
