import RosterCore
import RosterRuntime
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
    private var isAuthChange = false
    /// Output reserved on the connection for this call's answer, given back when it is answered.
    private var reservedBytes = 0

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
        if let id { connection.sendAnswer(RPCMessage.result(id: id, result), id: id) }
        end()
    }

    /// Succeeds with a whole answer line already written for this call's id, on a worker (a big page).
    func succeed(line: [UInt8]) {
        guard begin() else { return }
        if let id { connection.sendAnswer(line, id: id) }
        end()
    }

    func fail(_ error: RosterError) {
        guard begin() else { return }
        if let id { server.sendError(error, id: id, to: connection) }
        end()
    }

    func finish(line result: Result<[UInt8], RosterError>) {
        switch result {
        case .success(let line): succeed(line: line)
        case .failure(let error): fail(error)
        }
    }

    func finish(_ result: Result<JSONValue, RosterError>) {
        switch result {
        case .success(let value): succeed(value)
        case .failure(let error): fail(error)
        }
    }

    /// Marks this request as a change of who the session is: until it is answered, later requests that depend
    /// on that wait (see `SessionDependence`), so they see the session as this one leaves it.
    func beginAuthChange() {
        guard !isAuthChange, !answered else { return }
        isAuthChange = true
        session.authChangesRunning += 1
    }

    /// Runs `body` as a change of who the session is (see `beginAuthChange`), answering with what it hands back.
    func asAuthChange(_ body: (_ answer: @escaping (Result<JSONValue, RosterError>) -> Void) -> Void) {
        beginAuthChange()
        body { result in self.finish(result) }
    }

    private func end() {
        connection.requestFinished()
        guard isAuthChange else { return }
        session.authChangesRunning -= 1
        server.authChangeEnded(on: connection)
    }

    /// Holds `bytes` of the connection's output for an answer being built off the loop (see
    /// `Connection.reserveOutput`), until this call is answered.
    func reserveOutput(_ bytes: Int) {
        reservedBytes += bytes
        connection.reserveOutput(bytes)
    }

    private func begin() -> Bool {
        guard !answered else {
            assertionFailure("a request was answered twice")
            return false
        }
        answered = true
        if reservedBytes > 0 {
            connection.releaseOutput(reservedBytes)
            reservedBytes = 0
        }
        server.stats.requestsServed += 1
        return true
    }
}

/// A method's spec and the code that serves it. The handler is an unapplied method (`Server.hello`), so the
/// server's table of methods does not hold the server itself: no cycle keeps it alive past its life.
struct Method {
    let spec: MethodSpec
    let handler: (Server) -> (Call) -> Void
    /// Whether the request waits for a change of who the session is; most do.
    var dependence: SessionDependence = .identity
}
