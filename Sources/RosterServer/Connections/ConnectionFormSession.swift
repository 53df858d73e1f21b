import RosterCore
import RosterProtocol
import RosterRuntime
import RosterStorage

/// What a connection's forms reach of the sessions: the policy in force, where events go, and what a
/// registration, a log-in or a password change concerns. The session book, for the daemon's connections.
protocol FormSessionHost: AnyObject {
    var policy: Policy { get }
    func sendFormEvent(_ event: FormEvent, to connection: Connection)
    func sendEvent(_ type: String, _ members: [(String, JSONValue)], to connection: Connection,
                   coalescing key: OutputQueue.CoalesceKey?)
    /// Every registration ends here (see `SessionBook.accountRegistered`); `origin` is not re-checked.
    func accountRegistered(_ account: Account, by peer: PeerCredentials, from origin: RunningForm?)
    func logIn(_ connection: Connection, as user: Account, tokenHash: [UInt8]?)
    /// Each of `hashes` ends the sessions bound to it, on every connection but `origin` (when given).
    func tokensRevoked(_ hashes: [[UInt8]], except origin: Connection?)
}

extension SessionBook: FormSessionHost {}

/// A connection as its forms see it: the register and log-in forms' `FormSession` and the contacts form's
/// `ContactsFormSink`. The session book does the work; a form gets only this.
final class ConnectionFormSession<Sessions: FormSessionHost>: FormSession, ContactsFormSink {
    private unowned let sessions: Sessions
    private unowned let connection: Connection

    init(sessions: Sessions, connection: Connection) {
        self.sessions = sessions
        self.connection = connection
    }

    // MARK: FormSession

    var debounce: Duration { connection.session.debounce(under: sessions.policy) }
    var queueCharge: QueueCharge { connection.queueCharge }
    var peer: AuditPeer { connection.auditPeer }
    var locale: RosterLocale { connection.session.locale }

    func emit(_ event: FormEvent) { sessions.sendFormEvent(event, to: connection) }

    func registered(_ account: Account, by form: RunningForm) {
        sessions.accountRegistered(account, by: connection.peer, from: form)
    }

    func loggedIn(as account: Account, tokenHash: [UInt8]?) {
        sessions.logIn(connection, as: account, tokenHash: tokenHash)
    }

    var user: Account? { connection.session.user }
    var tokenHash: [UInt8]? { connection.session.tokenHash }

    /// This connection's own token is the one the change kept, so none of `hashes` is; nor is the connection
    /// touched, as it may have gone while the change ran.
    func tokensRevoked(_ hashes: [[UInt8]]) { sessions.tokensRevoked(hashes, except: nil) }

    // MARK: ContactsFormSink

    var peerIsBehind: Bool { connection.peerIsBehind }

    /// Coalesced, so that a peer that does not read gets only the newest.
    func results(query: String, items: [FoundContact], total: Int) {
        sessions.sendEvent("results", [
            ("form", .string(FormName.contacts.rawValue)), ("query", .string(query)),
            ("items", .array(items.map(ContactJSON.encode))), ("total", .int(total)),
        ], to: connection, coalescing: "results:contacts")
    }
}
