import RosterCore
import RosterRuntime
import RosterStorage

// What other daemons sharing the database changed, as the storage reports it (`StorageChange`), and how the
// storage is connected (`StorageState`).
//
// RULES
//   • A change made elsewhere takes the same path here as one made here: a new account is a live `taken` on every
//     open register form; a revoked token ends the sessions bound to it; a contact change refreshes that user's
//     open contacts forms, from an index read again (the one held, or loading, may predate the change).
//   • A deleted account ends its sessions, and the forms holding its name or email ask again (it is free now).
//   • Ended sessions (a lock or a password change elsewhere): every session of that account logs out.
//   • An email changed (here or elsewhere): the sessions of that account know it, the forms holding the new address
//     hear it is taken (as a registration's), and those holding the old one ask again (it is free now).
//   • Resync (changes may have been missed): every open form asks again about what the storage answered it,
//     every contacts index is read again and open contacts forms refresh, and every token a session holds is
//     asked about once (per token): a token that is gone, or whose account is locked, ends its sessions; one that cannot be asked about now
//     (an outage, a budget) leaves them be, as nothing is known.
//   • A state change is logged once: a warning when the storage goes down, a notice when it is up again.
extension Server {
    /// Called once, at init: the storage reports to this server from then on.
    func listenToStorage() {
        storage.onChange = { [unowned self] change in self.storageChanged(change) }
        storage.onStateChange = { [unowned self] state in self.storageStateChanged(state) }
        storage.onAudit = { [unowned self] entry, origin in self.auditCommitted(entry, origin) }
    }

    func storageChanged(_ change: StorageChange) {
        switch change {
        case .accountCreated(let username, let email):
            for form in allRunningForms { form.accountRegistered(username: username, email: email) }
        case .accountDeleted(let id, let username, let email):
            endSessions(of: id)
            for form in allRunningForms { form.storeChanged(.accountRemoved(username: username, email: email)) }
        case .tokenRevoked(let hash):
            tokenRevoked(hash)
        case .sessionsEnded(let account):
            endSessions(of: account)
        case .contactsChanged(let account):
            contacts.changedElsewhere(userID: account)
            contactsChanged(of: account)
        case .resync:
            contacts.invalidateAll()
            for form in allRunningForms { form.storeChanged(.anything) }
            recheckTokens()
        case .emailChanged(let account, let username, let email, let previous):
            for connection in connections.values where connection.session.user?.id == account {
                connection.session.user?.email = email
            }
            for form in allRunningForms {
                form.accountRegistered(username: username, email: email)
                if let previous { form.storeChanged(.accountRemoved(username: username, email: previous)) }
            }
        }
    }

    /// Every session logged in as `account`, on any connection, logs out; a resume of one of its tokens under way
    /// will not log in either.
    func endSessions(of account: AccountID) {
        revocations.sessionsEnded(of: account)
        for connection in connections.values where connection.session.user?.id == account {
            logOut(connection)
        }
    }

    /// One `resumeToken` per token some session holds, charged to the first connection holding it; a token the
    /// storage no longer knows is revoked here too, which ends every session bound to it.
    private func recheckTokens() {
        var holders: [[UInt8]: Connection] = [:]
        for connection in connections.values {
            guard connection.session.user != nil, let hash = connection.session.tokenHash, holders[hash] == nil else {
                continue
            }
            holders[hash] = connection
        }
        let idleMs = config.policy.sessionIdle.nanoseconds / 1_000_000
        for (hash, connection) in holders {
            // The daemon's own re-check, not a resume anybody asked for: nothing to audit.
            storage.resumeToken(hash: hash, idleLimitMs: idleMs, audit: nil, charge: connection.queueCharge) { [weak self] result in
                // Gone, or dead since a lock another daemon made.
                guard let self, case .success(let account) = result, account?.locked ?? true else { return }
                self.tokenRevoked(hash)
            }
        }
    }

    func storageStateChanged(_ state: StorageState) {
        let previous = storageState
        storageState = state
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
        postStatus()
    }

    /// How the storage reads in the status line: nothing while it serves.
    var storageStatus: String? {
        switch storageState.phase {
        case .up: nil
        case .down: "storage \(storageState.backend) down since \(UTCTime.rfc3339(unixMs: storageState.sinceMs))"
        case .connecting: "storage \(storageState.backend) connecting"
        }
    }
}
