/// The audit log (protocol.md §The audit log): an append-only record of who did what, when and from where. An entry for a change
/// is passed to the write that makes the change and commits in its transaction, so a crash keeps both or neither;
/// an entry for something that changed nothing (a refused log-in, a backup) is appended on its own.
///
/// Entries hold usernames, peer credentials, the hello's client name, outcomes and reasons: never a password, a
/// code or a token, and no backend adds any.
public protocol AuditStorage {
    /// Appends an entry for something that changed nothing else, durably, before answering; answers it as stored.
    /// Never refused by a budget: a refused log-in must leave its trace however full the queue is.
    func appendAudit(_ record: AuditRecord, completion: @escaping StorageCompletion<AuditEntry>)

    /// The entries that match, newest first (by id), at most `query.limit` of them.
    func auditEntries(_ query: AuditQuery, completion: @escaping StorageCompletion<[AuditEntry]>)

    /// Deletes every entry older than `beforeMs` (Unix milliseconds); answers how many went.
    func pruneAudit(before beforeMs: Int64, completion: @escaping StorageCompletion<Int>)
}

/// Where a backend reports the audit log as it grows.
public protocol AuditFeed: AnyObject {
    /// Set by the server before `warmUp`, and called on the loop thread for every committed entry: this daemon's
    /// (after its transaction committed) and, on a shared database, other daemons' (`origin == .elsewhere`).
    var onAudit: ((AuditEntry, AuditOrigin) -> Void)? { get set }
}

/// What an audit entry records; the raw values are the wire's `event` strings.
public enum AuditEvent: String, CaseIterable, Equatable, Sendable {
    case register
    case login
    case logout
    case resume
    case passwordChanged = "password_changed"
    case emailChanged = "email_changed"
    case deleted
    case locked
    case unlocked
    case recoveryCodesCreated = "recovery_codes_created"
    case recovered
    case totpEnabled = "totp_enabled"
    case totpDisabled = "totp_disabled"
    case sessionRevoked = "session_revoked"
    case failuresReset = "failures_reset"
    case backup
    /// A mail entered the outbox; `reason` is its kind (`MailKindName`), never its code.
    case mailQueued = "mail_queued"
    /// A mail was given up on after its retry window; `reason` is its kind.
    case mailFailed = "mail_failed"
    case emailVerified = "email_verified"
    /// A passkey was registered; `reason` names none of its bytes.
    case passkeyAdded = "passkey_added"
    case passkeyRemoved = "passkey_removed"
    /// A new passkey did not verify (`passkey.register_finish`); `reason` is the why. A refused passkey log-in
    /// is a failed `login` (method `passkey`, reason the why, `counter` for a sign count that went back).
    case passkeyRejected = "passkey_rejected"
    /// An app password was made (`account.app_password_create`); `reason` is none, never the secret.
    case appPasswordAdded = "app_password_added"
    case appPasswordRemoved = "app_password_removed"
}

/// Whether what an entry records happened.
public enum AuditOutcome: String, CaseIterable, Equatable, Sendable {
    case succeeded
    case failed
}

/// Where a committed entry was written, for `onAudit`.
public enum AuditOrigin: Equatable, Sendable {
    /// By this daemon: it goes to the journal too.
    case here
    /// By another daemon on the same database: only followers hear of it.
    case elsewhere
}

/// Who asked for what an entry records: the connection's SO_PEERCRED and what it said in `session.hello`.
public struct AuditPeer: Equatable, Sendable {
    public var uid: UInt32
    public var pid: Int32
    /// `session.hello` `client`, when the connection named one.
    public var client: String?
    /// `session.hello` `remote`: the address of the person a trusted gateway (roster-web) speaks for on this
    /// connection, in canonical form; nil for a connection that speaks for itself.
    public var remote: String?

    public init(uid: UInt32, pid: Int32, client: String?, remote: String? = nil) {
        self.uid = uid
        self.pid = pid
        self.client = client
        self.remote = remote
    }
}

/// One entry to write; the backend stamps its time (its clock) and id when it commits.
public struct AuditRecord: Equatable, Sendable {
    public var event: AuditEvent
    /// The canonical username the entry is about; nil when no account answered (a log-in as an unknown user: the
    /// identifier typed is not stored, since people type passwords into username fields).
    public var username: String?
    public var peer: AuditPeer
    public var outcome: AuditOutcome
    /// A failure's stable reason (`wrong_password`, `invalid_code`, `locked`, `rate_limited`, …), or a lock's
    /// reason as the administrator gave it; nil otherwise.
    public var reason: String?
    /// How many of this peer's failed-log-in entries were left out just before this one, by the per-minute cap.
    public var suppressed: Int
    /// How a `login` entry's log-in was proved; nil for every other entry.
    public var method: LoginMethod?

    public init(event: AuditEvent, username: String?, peer: AuditPeer, outcome: AuditOutcome = .succeeded,
                reason: String? = nil, suppressed: Int = 0, method: LoginMethod? = nil) {
        self.event = event
        self.username = username
        self.peer = peer
        self.outcome = outcome
        self.reason = reason
        self.suppressed = suppressed
        self.method = method
    }
}

/// How a log-in was proved, as its `login` entry says (`method`).
public enum LoginMethod: String, CaseIterable, Equatable, Sendable {
    case password
    case passkey
    /// A recovery code (typed or mailed) that set a new password and logged in.
    case recovery
    /// An app password (`auth.dav_login`).
    case appPassword = "app_password"
}

/// An entry as stored.
public struct AuditEntry: Equatable, Sendable {
    /// Unique in its database and increasing as entries are written (newest first is by id, `beforeID` pages by
    /// it, and a follower de-duplicates by it).
    public var id: Int64
    /// Unix milliseconds, by the backend's clock.
    public var timeMs: Int64
    public var record: AuditRecord

    public init(id: Int64, timeMs: Int64, record: AuditRecord) {
        self.id = id
        self.timeMs = timeMs
        self.record = record
    }
}

/// Which entries `auditEntries` answers; every filter that is set must hold.
public struct AuditQuery: Equatable, Sendable {
    /// A canonical username.
    public var username: String?
    public var event: AuditEvent?
    /// Only entries at or after this Unix millisecond.
    public var sinceMs: Int64?
    /// Only entries with a smaller id (the next page, newest first).
    public var beforeID: Int64?
    public var limit: Int

    public init(username: String? = nil, event: AuditEvent? = nil, sinceMs: Int64? = nil, beforeID: Int64? = nil,
                limit: Int) {
        self.username = username
        self.event = event
        self.sinceMs = sinceMs
        self.beforeID = beforeID
        self.limit = limit
    }
}
