import RosterCore
import RosterRuntime
import RosterProtocol
import RosterStorage

/// Who is logged in where, across the daemon's connections: log-ins and log-outs, revocations (and the resumes
/// they race, see `RevocationsDuringResumes`), live `taken` on every open register form, contacts refreshes, and
/// the events every session's screens are drawn from. The method groups reach the sessions through it, each by
/// its own narrow protocol (`AccountSessions`, `SessionChanges`, `FormHost`, `AuditDesk`, …).
///
/// RULES
///   • A revoked token ends every session bound to it, on every connection; so does the end of every session of
///     an account (a lock, a deletion, a password change), whether it was made here or reported by the storage.
///   • The contacts and password forms are the session's user's: when the user changes or logs out they close,
///     and the client hears so (`form` `closed: true`).
///   • A user's contacts index is kept only while some connection is logged in as them.
final class SessionBook {
    /// The calls of every method group this book serves are the daemon's connections'.
    typealias Host = Connection

    private let connections: ConnectionTable<Connection>
    private let contacts: ContactsService
    /// Where `account.export` reads the user's contacts from.
    /// Only to export a user's contacts (`account.export`).
    private let storage: BoundStorage<any ContactStorage>
    private let output: ServerOutput
    private let stats: ServerStats
    private let trust: PeerTrust
    /// Read at each use: a reload's log level reaches the sessions' lines at once.
    var logger: Logger
    /// The configuration in force; see `configChanged`.
    private(set) var config: DaemonConfig
    var revocations = RevocationsDuringResumes()
    /// Every method's spec, sorted by name, for `rpc.describe`: the dispatcher's, once its table is complete.
    var methodSpecs: [MethodSpec] = []

    init(connections: ConnectionTable<Connection>, contacts: ContactsService, storage: any Storage,
         output: ServerOutput, stats: ServerStats, trust: PeerTrust, config: DaemonConfig, logger: Logger) {
        self.connections = connections
        self.contacts = contacts
        self.storage = BoundStorage { storage.acting(for: $0) }
        self.output = output
        self.stats = stats
        self.trust = trust
        self.config = config
        self.logger = logger
    }

    var policy: Policy { config.policy }
    var auditSettings: AuditSettings { config.audit }

    /// A reload: every open form judges by the new policy from now on.
    func configChanged(_ config: DaemonConfig) {
        self.config = config
        for form in allRunningForms { form.policyChanged(config.policy) }
    }

    /// Every session's open forms, for what concerns them all (a registration, a reload).
    var allRunningForms: [RunningForm] { connections.values.flatMap { $0.session.forms.values } }

    func isAdmin(_ peer: PeerCredentials) -> Bool { trust.isAdmin(peer) }

    func mayNameRemote(_ peer: PeerCredentials) -> Bool { trust.mayNameRemote(peer) }

    // MARK: Registrations

    /// Every registration, by `users.register` or a register form, ends here: it is logged once, and every
    /// other open register form that holds the name or email is re-checked.
    func accountRegistered(_ account: Account, by peer: PeerCredentials, from origin: RunningForm?) {
        logger.info("registered", [("ROSTER_USER", account.username), ("ROSTER_PEER_UID", String(peer.uid))])
        for form in allRunningForms where form !== origin {
            form.accountRegistered(username: account.username, email: account.email)
        }
    }

    func accountRegistered(_ account: Account, by peer: PeerCredentials) {
        accountRegistered(account, by: peer, from: nil)
    }

    /// An account made by another daemon: a live `taken` on every open register form that holds its name or email.
    func accountCreatedElsewhere(username: String, email: String?) {
        for form in allRunningForms { form.accountRegistered(username: username, email: email) }
    }

    // MARK: Log-ins and log-outs

    /// The session is now `user`'s, with every method its account may call; it hears so through a `session` event.
    func logIn(_ connection: Connection, as user: Account, tokenHash: [UInt8]?) {
        logIn(connection, as: user, tokenHash: tokenHash, scope: .full)
    }

    /// The session is now `user`'s, with what `scope` lets it call; it hears so through a `session` event.
    func logIn(_ connection: Connection, as user: Account, tokenHash: [UInt8]?, scope: SessionScope) {
        connection.session.scope = scope
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

    /// A closed connection's forms close with it, and its user's index goes if nobody else is logged in as them.
    func connectionClosed(_ connection: Connection) {
        connection.session.closeAllForms()
        if let user = connection.session.user { releaseIfUnused(user.id) }
    }

    // MARK: Revocations

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

    /// A write found the token `hash` gone where it ran: every session bound to it ends.
    func sessionFoundEnded(_ hash: [UInt8]) { tokenRevoked(hash) }

    /// Every session logged in as `account`, on any connection, logs out; a resume of one of its tokens under way
    /// will not log in either.
    func endSessions(of account: AccountID) {
        revocations.sessionsEnded(of: account)
        for connection in connections.values where connection.session.user?.id == account {
            logOut(connection)
        }
    }

    func resumeStarted() -> UInt64 { revocations.resumeStarted() }

    func resumeEnded(startedAt start: UInt64, hash: [UInt8]?, account: AccountID?) -> Bool {
        revocations.resumeEnded(startedAt: start, hash: hash, account: account)
    }

    /// Each token some session holds, with the charge of the first connection holding it: what a resync asks
    /// the storage about once per token.
    func heldTokens() -> [[UInt8]: QueueCharge] {
        var holders: [[UInt8]: QueueCharge] = [:]
        for connection in connections.values {
            guard connection.session.user != nil, let hash = connection.session.tokenHash, holders[hash] == nil else {
                continue
            }
            holders[hash] = connection.queueCharge
        }
        return holders
    }

    // MARK: Changes of an account

    /// The account is gone, deleted here (its tokens are revoked) or by another daemon: its sessions end, and
    /// the forms holding its name or email ask again (it is free now).
    func accountRemoved(id: AccountID, username: String, email: String?) {
        endSessions(of: id)
        for form in allRunningForms { form.storeChanged(.accountRemoved(username: username, email: email)) }
    }

    func accountDeleted(_ deleted: DeletedAccount) {
        tokensRevoked(deleted.revokedTokens, except: nil)
        // The same path as a deletion another daemon reports: sessions end, forms holding the name re-check.
        accountRemoved(id: deleted.account.id, username: deleted.account.username, email: deleted.account.email)
        contacts.release(userID: deleted.account.id)
    }

    func accountChanged(_ account: Account, previousEmail: String?) {
        for connection in connections.values where connection.session.user?.id == account.id {
            connection.session.user = account
        }
        guard account.email != previousEmail else { return }
        // The same path as a change another daemon reports: forms holding either address hear of it.
        emailChanged(account: account.id, username: account.username, email: account.email, previous: previousEmail)
    }

    /// An email changed (here or elsewhere): the sessions of that account know it, the forms holding the new
    /// address hear it is taken (as a registration's), and those holding the old one ask again (it is free now).
    func emailChanged(account: AccountID, username: String, email: String?, previous: String?) {
        for connection in connections.values where connection.session.user?.id == account {
            connection.session.user?.email = email
        }
        for form in allRunningForms {
            form.accountRegistered(username: username, email: email)
            if let previous { form.storeChanged(.accountRemoved(username: username, email: previous)) }
        }
    }

    /// Changes may have been missed: every open form asks again about what the storage answered it.
    func storeMayHaveChanged() {
        for form in allRunningForms { form.storeChanged(.anything) }
    }

    // MARK: Contacts

    /// Every open contacts form of this user, on any connection, gets fresh results.
    func contactsChanged(of userID: Int64) {
        for connection in connections.values {
            guard let form = connection.session.forms[.contacts] as? ContactsFormRunner, form.ownerID == userID else { continue }
            form.contactsChanged()
        }
    }

    /// A user's search index is kept only while some connection is logged in as them.
    func releaseIfUnused(_ userID: Int64) {
        guard !connections.values.contains(where: { $0.session.user?.id == userID }) else { return }
        contacts.release(userID: userID)
    }

    func exportContacts(of account: Account, byteLimit: Int, charge: QueueCharge, cancelled: Locked<Bool>,
                        completion: @escaping (Result<String, RosterError>) -> Void) {
        storage.acting(for: charge).exportContacts(of: account.id, after: 0, into: VCardBook(byteLimit: byteLimit),
                                                   cancelled: cancelled) { result in
            completion(result.mapError(\.rosterError).flatMap { $0 })
        }
    }

    /// Whether all connections together, or those of `uid`, hold as much unsent output as they may.
    func isOutputBudgetSpent(uid: UInt32) -> Bool { output.isSpent(uid: uid) }

    // MARK: Events

    /// A peer caught up with its output: a contacts form that skipped results meanwhile refreshes once.
    func outputDrained(_ connection: Connection) {
        (connection.session.forms[.contacts] as? ContactsFormRunner)?.outputDrained()
    }

    func sendEvent(_ type: String, _ members: [(String, JSONValue)], to connection: Connection,
                   coalescing key: OutputQueue.CoalesceKey? = nil) {
        stats.eventsSent += 1
        connection.sendEvent(RPCMessage.event(type: type, members), coalescing: key)
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

    // MARK: Audit followers

    /// Whether connection `id` is still open.
    func isConnectionOpen(_ id: UInt64) -> Bool { connections[id] != nil }

    func sendAuditEvent(_ entry: JSONValue, to id: UInt64) {
        guard let connection = connections[id] else { return }
        // Each entry is news of its own: none supersedes another, so none is coalesced away.
        sendEvent("audit", [("entry", entry)], to: connection)
    }

    func sendAuditMissed(_ missed: MissedAuditEntries, to id: UInt64) {
        guard let connection = connections[id] else { return }
        sendEvent("audit_missed", AdminAuditMethods<SessionBook>.described(missed), to: connection)
    }

    func unsentOutputBytes(of id: UInt64) -> Int { connections[id]?.unsentBytes ?? 0 }

    func notifyWhenDrained(_ id: UInt64, backlogBytes: Int) {
        guard let connection = connections[id] else { return }
        logger.notice("an audit follower left more than \(backlogBytes) bytes unread: "
                      + "entries for it are counted, not queued, until it reads", [("ROSTER_CONNECTION", String(id))])
        connection.notifyWhenDrained()
    }
}
