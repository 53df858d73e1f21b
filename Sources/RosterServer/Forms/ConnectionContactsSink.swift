import RosterCore
import RosterProtocol

/// A contacts form's results as `results` events on the connection it was opened on, coalesced so that a peer
/// that does not read gets only the newest.
final class ConnectionContactsSink: ContactsFormSink {
    private unowned let server: Server
    private unowned let connection: Connection

    init(server: Server, connection: Connection) {
        self.server = server
        self.connection = connection
    }

    var peerIsBehind: Bool { connection.peerIsBehind }

    func results(query: String, items: [Contact], total: Int) {
        server.sendEvent("results", [
            ("form", .string(FormName.contacts.rawValue)), ("query", .string(query)),
            ("items", .array(items.map(ContactJSON.encode))), ("total", .int(total)),
        ], to: connection, coalescing: "results:contacts")
    }
}

extension Server {
    /// What a contacts form opened on `connection` is given: the loop's clock, the contacts, the connection as its
    /// sink, the session's throttle under the policy in force, and the connection's charge (its user is the form's).
    func contactsFormEnvironment(for connection: Connection) -> ContactsFormEnvironment {
        let session = connection.session
        return ContactsFormEnvironment(
            scheduler: loop, contacts: contacts, sink: ConnectionContactsSink(server: self, connection: connection),
            throttle: { [unowned self, unowned session] in session.throttle(under: self.config.policy) },
            charge: connection.queueCharge, logger: logger)
    }
}
