import RosterCore
import RosterRuntime
import RosterProtocol
import RosterStorage

/// What concerns sessions across connections: who is logged in where, live `taken`, contacts refresh, reloads,
/// and the form events every session's screens are drawn from.
extension Server {
    /// Every session's open forms, for what concerns them all (a registration, a reload).
    var allRunningForms: [RunningForm] { connections.values.flatMap { $0.session.forms.values } }

    /// Every registration, by `users.register` or a register form, ends here: it is logged once, and every
    /// other open register form that holds the name or email is re-checked.
    func accountRegistered(_ account: Account, by peer: PeerCredentials, from origin: RunningForm?) {
        logger.info("registered", [("ROSTER_USER", account.username), ("ROSTER_PEER_UID", String(peer.uid))])
        for form in allRunningForms where form !== origin {
            form.accountRegistered(username: account.username, email: account.email)
        }
    }

    func configChanged() {
        accounts.policy = config.policy
        accounts.failedEntries.perMinute = config.audit.failedLoginEntriesPerMinute
        passwords.policy = config.policy
        passwords.apply(config.server)
        storage.apply(config.server)
        plainAnswers = PlainAnswers()
        for connection in connections.values { connection.settings = config.server }
        for form in allRunningForms { form.policyChanged(config.policy) }
    }

    /// The session is now `user`'s; it hears so through a `session` event.
    func logIn(_ connection: Connection, as user: Account, tokenHash: [UInt8]?) {
        if let previous = connection.session.user, previous.id != user.id {
            closeUsersForms(of: connection)
            connection.session.grant?.end()
            connection.session.user = user
            releaseIfUnused(previous.id)
        }
        connection.session.user = user
        // The same user again keeps the writes already queued: they were theirs, and their token checks them still.
        if connection.session.grant == nil || connection.session.tokenHash != tokenHash {
            connection.session.grant = SessionGrant(tokenHash: tokenHash)
        }
        connection.session.tokenHash = tokenHash
        sendEvent("session", [("user", .string(user.username))], to: connection)
        logger.info("logged in", [("ROSTER_USER", user.username), ("ROSTER_PEER_UID", String(connection.peer.uid))])
    }

    /// A revoked token ends every session bound to it, on every connection (`except` the one that asked, which
    /// logs itself out): each gets its `session` event `user: null`, and its contacts form closes. Every
    /// revocation of a token goes through here.
    func tokenRevoked(_ hash: [UInt8], except origin: Connection? = nil) {
        revocations.tokenRevoked(hash)
        for connection in connections.values where connection !== origin && connection.session.tokenHash == hash {
            logOut(connection)
        }
    }

    /// Several tokens revoked at once (a password change, `session.revoke_others`, a deletion): each ends its
    /// sessions as `tokenRevoked` does.
    func tokensRevoked(_ hashes: [[UInt8]], except origin: Connection? = nil) {
        for hash in hashes { tokenRevoked(hash, except: origin) }
    }

    func logOut(_ connection: Connection) {
        let previous = connection.session.user
        connection.session.user = nil
        connection.session.tokenHash = nil
        // Every contacts write still queued for this log-in writes nothing now, and answers `unauthenticated`.
        connection.session.grant?.end()
        connection.session.grant = nil
        // The contacts and password forms are a user's; with nobody logged in they have nothing to show.
        closeUsersForms(of: connection)
        if let previous {
            logger.info("logged out", [("ROSTER_USER", previous.username)])
            releaseIfUnused(previous.id)
        }
        sendEvent("session", [("user", .null)], to: connection)
    }

    /// The contacts and password forms are the session's user's (their contacts, their password): when the user
    /// changes or logs out they close, and the client hears so: a `form` event with `closed: true` (it would
    /// otherwise learn only from its next `form.input`'s `form_not_open`).
    private func closeUsersForms(of connection: Connection) {
        for name in [FormName.contacts, .password] {
            guard let form = connection.session.forms.removeValue(forKey: name) else { continue }
            form.close()
            sendEvent("form", [("form", .string(name.rawValue)), ("submittable", .bool(false)),
                               ("closed", .bool(true))], to: connection)
        }
    }

    /// Every open contacts form of this user, on any connection, gets fresh results.
    func contactsChanged(of userID: Int64) {
        for connection in connections.values {
            guard let form = connection.session.forms[.contacts] as? ContactsFormRunner, form.ownerID == userID else { continue }
            form.contactsChanged()
        }
    }

    /// A peer caught up with its output: a contacts form that skipped results meanwhile refreshes once, and an audit
    /// follower that missed entries hears how many.
    func outputDrained(_ connection: Connection) {
        (connection.session.forms[.contacts] as? ContactsFormRunner)?.outputDrained()
        adminAuditMethods.outputDrained(connection.id)
    }

    /// A user's search index is kept only while some connection is logged in as them.
    func releaseIfUnused(_ userID: Int64) {
        guard !connections.values.contains(where: { $0.session.user?.id == userID }) else { return }
        contacts.release(userID: userID)
    }

    func sendFormEvent(_ event: FormEvent, to connection: Connection) {
        let message = event.message(locale: connection.session.locale, policy: config.policy)
        switch event {
        case .field(let form, let field, let state, let code, let enabled, let rev):
            sendEvent("field", [
                ("form", .string(form.rawValue)), ("field", .string(field.rawValue)), ("state", .string(state.rawValue)),
                ("code", .string(code.rawValue)), ("message", .optional(message)), ("enabled", .bool(enabled)),
                ("rev", .int(rev)),
            ], to: connection, coalescing: "field:\(form.rawValue):\(field.rawValue)")
        case .form(let form, let submittable):
            sendEvent("form", [("form", .string(form.rawValue)), ("submittable", .bool(submittable))], to: connection,
                      coalescing: "form:\(form.rawValue)")
        case .submit(let form, let state, let code):
            sendEvent("submit", [
                ("form", .string(form.rawValue)), ("state", .string(state.rawValue)), ("code", .string(code.rawValue)),
                ("message", .optional(message)),
            ], to: connection)
        }
    }
}
