import RosterStorage

/// What the daemon's mail needs of the host it runs on: where the mail program runs, the host's name (the default
/// `From=`, Message-IDs), and the names its claims and audit entries go under. The composition root makes it;
/// a server built without one (most tests) queues mail that no sender takes.
struct MailHost {
    let lane: SendmailLane
    let hostName: String
    /// Unique to this run of the daemon (`MailSender.uniqueClaimant`).
    let claimant: String
    /// Who the audit log says gave a mail up: the daemon itself.
    let auditPeer: AuditPeer
}
