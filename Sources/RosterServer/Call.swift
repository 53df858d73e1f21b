import RosterCore
import RosterProtocol

/// One request being served: its validated params and the way to answer it, now or later.
///
/// Exactly one answer counts; a second is a bug and is dropped. A notification's answer is never written,
/// but still ends the request so that a half-closed peer is not kept waiting.
final class Call {
    let id: JSONValue?
    let params: Params
    let connection: Connection
    private unowned let server: Server
    private var answered = false

    init(id: JSONValue?, params: Params, connection: Connection, server: Server) {
        self.id = id
        self.params = params
        self.connection = connection
        self.server = server
    }

    var session: Session { connection.session }
    var peer: PeerCredentials { connection.peer }

    func succeed(_ result: JSONValue) {
        guard begin() else { return }
        if let id { connection.send(RPCMessage.result(id: id, result)) }
        connection.requestFinished()
    }

    func fail(_ error: RosterError) {
        guard begin() else { return }
        if let id { server.sendError(error, id: id, to: connection) }
        connection.requestFinished()
    }

    func finish(_ result: Result<JSONValue, RosterError>) {
        switch result {
        case .success(let value): succeed(value)
        case .failure(let error): fail(error)
        }
    }

    /// Runs `body` in the session's auth order (see `Session.inAuthOrder`); the next change starts once this call is answered.
    func inAuthOrder(_ body: @escaping (_ answer: @escaping (Result<JSONValue, RosterError>) -> Void) -> Void) {
        session.inAuthOrder { [self] done in
            body { result in
                self.finish(result)
                done()
            }
        }
    }

    private func begin() -> Bool {
        guard !answered else {
            assertionFailure("a request was answered twice")
            return false
        }
        answered = true
        server.stats.requestsServed += 1
        return true
    }
}

/// A method's spec and the code that serves it. The handler is an unapplied method (`Server.hello`), so the
/// server's table of methods does not hold the server itself: no cycle keeps it alive past its life.
struct Method {
    let spec: MethodSpec
    let handler: (Server) -> (Call) -> Void
}
