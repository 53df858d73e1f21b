import RosterCore
import RosterRuntime
import RosterStorage

/// What the storage reports, taken to the sessions: what other daemons sharing the database changed
/// (`StorageChange`), how the storage is connected (`StorageState`), and every audit entry as it commits.
///
/// RULES
///   • A change made elsewhere takes the same path here as one made here: a new account is a live `taken` on every
///     open register form; a revoked token ends the sessions bound to it; a contact change refreshes that user's
///     open contacts forms, from an index read again (the one held, or loading, may predate the change).
///   • A deleted account ends its sessions, and the forms holding its name or email ask again (it is free now).
///   • Ended sessions (a lock or a password change elsewhere): every session of that account logs out.
///   • An email changed (here or elsewhere): the sessions of that account know it, the forms holding the new address
///     hear it is taken (as a registration's), and those holding the old one ask again (it is free now).
///   • Resync (changes may have been missed): every open form asks again about what the storage answered it,
///     every contacts index is read again and open contacts forms refresh, and every token a session holds is
///     asked about once (per token): a token that is gone, or whose account is locked, ends its sessions; one
///     that cannot be asked about now (an outage, a budget) leaves them be, as nothing is known.
///   • A state change is logged once: a warning when the storage goes down, a notice when it is up again.
///   • This daemon's audit entries go to the journal, with native fields (ROSTER_EVENT, ROSTER_USER,
///     ROSTER_PEER_UID, …); every committed entry, this daemon's or (on a shared database) another's, goes on to
///     the admin connections that follow the log (`onAudit`).
final class StorageFeed {
    private let storage: any Storage
    private let sessions: SessionBook
    private let contacts: ContactsService
    /// Read at each use: a reload's log level reaches the feed's lines at once.
    var logger: Logger
    /// How long a token may sit unused, which a resync's re-check of the held tokens asks the storage by.
    var sessionIdle: Duration
    /// The storage's connection state as last reported, for `admin.stats` and the status line.
    private(set) var state: StorageState
    /// Every committed audit entry, once journaled when it is this daemon's: the followers' half.
    var onAudit: (AuditEntry) -> Void = { _ in }
    /// The storage's phase changed (and was logged): the status line says so at once.
    var onPhaseChange: () -> Void = {}

    /// The storage reports to this feed from now on.
    init(storage: any Storage, sessions: SessionBook, contacts: ContactsService, logger: Logger, sessionIdle: Duration) {
        self.storage = storage
        self.sessions = sessions
        self.contacts = contacts
        self.logger = logger
        self.sessionIdle = sessionIdle
        state = storage.state
        storage.onChange = { [unowned self] change in self.storageChanged(change) }
        storage.onStateChange = { [unowned self] state in self.storageStateChanged(state) }
        storage.onAudit = { [unowned self] entry, origin in self.auditCommitted(entry, origin) }
    }

    func storageChanged(_ change: StorageChange) {
        switch change {
        case .accountCreated(let username, let email):
            sessions.accountCreatedElsewhere(username: username, email: email)
        case .accountDeleted(let id, let username, let email):
            sessions.accountRemoved(id: id, username: username, email: email)
        case .tokenRevoked(let hash):
            sessions.tokenRevoked(hash)
        case .sessionsEnded(let account):
            sessions.endSessions(of: account)
        case .contactsChanged(let account):
            contacts.changedElsewhere(userID: account)
            sessions.contactsChanged(of: account)
        case .resync:
            contacts.invalidateAll()
            sessions.storeMayHaveChanged()
            recheckTokens()
        case .emailChanged(let account, let username, let email, let previous):
            sessions.emailChanged(account: account, username: username, email: email, previous: previous)
        }
    }

    /// One `resumeToken` per token some session holds, charged to the first connection holding it; a token the
    /// storage no longer knows is revoked here too, which ends every session bound to it.
    private func recheckTokens() {
        let idleMs = sessionIdle.nanoseconds / 1_000_000
        for (hash, charge) in sessions.heldTokens() {
            // The daemon's own re-check, not a resume anybody asked for: nothing to audit.
            storage.acting(for: charge).resumeToken(hash: hash, idleLimitMs: idleMs, audit: nil) { [weak self] result in
                // Gone, or dead since a lock another daemon made.
                guard let self, case .success(let account) = result, account?.locked ?? true else { return }
                self.sessions.tokenRevoked(hash)
            }
        }
    }

    func storageStateChanged(_ state: StorageState) {
        let previous = self.state
        self.state = state
        guard state.phase != previous.phase else { return }
        let fields = [("ROSTER_STORAGE", state.backend), ("ROSTER_STORAGE_STATE", state.phase.rawValue)]
        switch state.phase {
        case .down:
            logger.warning("storage \(state.backend) is down since \(UTCTime.rfc3339(unixMs: state.sinceMs)): requests "
                           + "that need it answer storage_unavailable until it is back", fields)
        case .up where previous.phase == .down:
            let seconds = max(0, state.sinceMs - previous.sinceMs) / 1_000
            logger.notice("storage \(state.backend) is up again after \(seconds) s down", fields)
        case .up:
            logger.notice("storage \(state.backend) is up", fields)
        case .connecting:
            logger.info("storage \(state.backend) is connecting", fields)
        }
        onPhaseChange()
    }

    /// How the storage reads in the status line: nothing while it serves.
    var status: String? {
        switch state.phase {
        case .up: nil
        case .down: "storage \(state.backend) down since \(UTCTime.rfc3339(unixMs: state.sinceMs))"
        case .connecting: "storage \(state.backend) connecting"
        }
    }

    // MARK: Audit entries

    /// Called on the loop thread for each committed entry.
    func auditCommitted(_ entry: AuditEntry, _ origin: AuditOrigin) {
        if origin == .here { journal(entry) }
        onAudit(entry)
    }

    /// This daemon's entry as a journal line: `audit: <event> <outcome>`, its fields native, so
    /// `journalctl ROSTER_EVENT=login ROSTER_OUTCOME=failed` finds them. An entry holds no secret, nor does this.
    private func journal(_ entry: AuditEntry) {
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
}
