import RosterCore
import RosterRuntime
import RosterStorage

/// The session a register, log-in or password form belongs to, as the form's runner sees it: where its events go, what
/// its work is charged to, and what a successful submit changes. The server gives each connection's forms one;
/// a test gives a recorder.
protocol FormSession: AnyObject {
    /// The debounce in force for this session: its `session.hello` override, or the configuration's.
    var debounce: Duration { get }
    /// Who the form's checks and submits are charged to.
    var queueCharge: QueueCharge { get }
    /// Who submits: its uid (the rate limit's key), pid and `session.hello` client (stored with the token a submit
    /// issues), as the audit log names it.
    var peer: AuditPeer { get }
    /// The language the session's mails are written in (a registration's verification code, a notice).
    var locale: RosterLocale { get }
    /// The event sink: one of this form's events for the client.
    func emit(_ event: FormEvent)
    /// A submit of `form` created `account`; every other open register form must hear of it.
    func registered(_ account: Account, by form: RunningForm)
    /// A submit logged the session in, with the token it stored (nil when none could be stored).
    func loggedIn(as account: Account, tokenHash: [UInt8]?)
    /// Who the session is logged in as; the password form changes this user's password.
    var user: Account? { get }
    /// The hash of the token the session is bound to, which a password change keeps; nil when it has none.
    var tokenHash: [UInt8]? { get }
    /// A password change revoked these tokens: every session bound to one of them ends, on every connection.
    func tokensRevoked(_ hashes: [[UInt8]])
}

/// What a register, log-in or password form's runner is given, and all it is given: the loop's clock and timers, the
/// account procedures (the storage and the password work behind them), and its session. Never the server or
/// the connection, so a runner is tested on a `ManualScheduler` with an in-memory storage.
struct FormEnvironment {
    let scheduler: any Scheduler
    let accounts: AccountProcedures
    let session: any FormSession
}
