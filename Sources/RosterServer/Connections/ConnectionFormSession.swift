import RosterCore
import RosterRuntime
import RosterStorage

/// A connection's session as its register and log-in forms see it (`FormSession`): the server does the work,
/// the form gets only this.
final class ConnectionFormSession: FormSession {
    private unowned let server: Server
    private unowned let connection: Connection

    init(server: Server, connection: Connection) {
        self.server = server
        self.connection = connection
    }

    var debounce: Duration { connection.session.debounce(under: server.config.policy) }
    var queueCharge: QueueCharge { connection.queueCharge }
    var peerUID: UInt32 { connection.peer.uid }

    func emit(_ event: FormEvent) { server.sendFormEvent(event, to: connection) }

    func registered(_ account: Account, by form: OpenForm) {
        server.accountRegistered(account, by: connection.peer, from: form)
    }

    func loggedIn(as account: Account, tokenHash: [UInt8]?) {
        server.logIn(connection, as: account, tokenHash: tokenHash)
    }
}

extension Connection {
    /// Who this connection's next job is charged to: its user once logged in, its peer uid before.
    var queueCharge: QueueCharge {
        QueueCharge(payer: session.user.map { .account($0.id) } ?? .peer(peer.uid), connection: id)
    }
}
