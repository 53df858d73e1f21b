import RosterCore
import RosterProtocol
import RosterRuntime
import RosterStorage

/// A connection as its forms see it: the register and log-in forms' `FormSession` and the contacts form's
/// `ContactsFormSink`. The server does the work; a form gets only this.
final class ConnectionFormSession: FormSession, ContactsFormSink {
    private unowned let server: Server
    private unowned let connection: Connection

    init(server: Server, connection: Connection) {
        self.server = server
        self.connection = connection
    }

    // MARK: FormSession

    var debounce: Duration { connection.session.debounce(under: server.config.policy) }
    var queueCharge: QueueCharge { connection.queueCharge }
    var peer: AuditPeer { connection.auditPeer }

    func emit(_ event: FormEvent) { server.sendFormEvent(event, to: connection) }

    func registered(_ account: Account, by form: RunningForm) {
        server.accountRegistered(account, by: connection.peer, from: form)
    }

    func loggedIn(as account: Account, tokenHash: [UInt8]?) {
        server.logIn(connection, as: account, tokenHash: tokenHash)
    }

    var user: Account? { connection.session.user }
    var tokenHash: [UInt8]? { connection.session.tokenHash }

    /// This connection's own token is the one the change kept, so none of `hashes` is; nor is the connection
    /// touched, as it may have gone while the change ran.
    func tokensRevoked(_ hashes: [[UInt8]]) { server.tokensRevoked(hashes) }

    // MARK: ContactsFormSink

    var peerIsBehind: Bool { connection.peerIsBehind }

    /// Coalesced, so that a peer that does not read gets only the newest.
    func results(query: String, items: [FoundContact], total: Int) {
        server.sendEvent("results", [
            ("form", .string(FormName.contacts.rawValue)), ("query", .string(query)),
            ("items", .array(items.map(ContactJSON.encode))), ("total", .int(total)),
        ], to: connection, coalescing: "results:contacts")
    }
}
