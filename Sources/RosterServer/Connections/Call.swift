import RosterCore
import RosterRuntime
import RosterProtocol
import RosterStorage

/// What a call is answered through: a connection in the daemon, a recording double in a unit test.
protocol CallHost: AnyObject {
    /// The connection's number, which its work is charged under (see `queueCharge`).
    var id: UInt64 { get }
    var session: Session { get }
    var peer: PeerCredentials { get }
    /// Delivers a whole answer line for request `id` (see `Connection.sendAnswer`).
    func sendAnswer(_ bytes: [UInt8], id: JSONValue)
    /// Delivers `error` as the answer to request `id`, worded in the session's locale.
    func sendError(_ error: RosterError, id: JSONValue)
    func reserveOutput(_ bytes: Int)
    func releaseOutput(_ bytes: Int)
    /// A request was answered (counted for `admin.stats`), before its answer is delivered.
    func requestAnswered()
    /// A request's answer went out; a half-closed or paused peer may move on.
    func requestFinished()
    /// A change of who the session is was answered: what waited behind it may now be served.
    func authChangeEnded()
}

extension CallHost {
    /// Who this connection's next job is charged to: its user once logged in; before, the remote a trusted
    /// gateway speaks for (by network, as its limits count), or else its peer uid.
    var queueCharge: QueueCharge {
        let payer: QueuePayer = session.user.map { .account($0.id) }
            ?? session.remote.map { .remote($0.limitNetwork) } ?? .peer(peer.uid)
        return QueueCharge(payer: payer, connection: id)
    }

    /// Who the audit log names for what this connection does: the peer's uid and pid, and its `session.hello`
    /// client and remote. Calls and forms both take it from here.
    var auditPeer: AuditPeer {
        AuditPeer(uid: peer.uid, pid: peer.pid, client: session.client, remote: session.remote?.text)
    }
}

/// A request served on a connection of the daemon.
typealias Call = RequestCall<Connection>

/// One request being served: its validated params and the way to answer it, now or later.
///
/// Exactly one answer counts; a second is a bug and is dropped. A notification's answer is never written,
/// but still ends the request so that a half-closed peer is not kept waiting.
final class RequestCall<Host: CallHost> {
    let id: JSONValue?
    let params: Params
    /// Where the answer goes; the methods also reach the connection's session, charge and settings through it.
    let connection: Host
    private var answered = false
    private var isAuthChange = false
    /// Output reserved on the connection for this call's answer, given back when it is answered.
    private var reservedBytes = 0

    init(id: JSONValue?, params: Params, connection: Host) {
        self.id = id
        self.params = params
        self.connection = connection
    }

    var session: Session { connection.session }
    var peer: PeerCredentials { connection.peer }
    /// Who the audit log names for what this call does (see `CallHost.auditPeer`).
    var auditPeer: AuditPeer { connection.auditPeer }

    /// Whether this call may use `admin.*`: `isAdmin` judges the peer uid (root, the daemon's user), and a
    /// connection whose hello named a `remote` has no rights of its own whatever its uid, as it carries what a
    /// browser sent, which no administrator typed (a gateway running as root must not hand its root to the web).
    func mayAdminister(_ isAdmin: (PeerCredentials) -> Bool) -> Bool {
        session.remote == nil && isAdmin(peer)
    }

    /// The session's user, for a method that needs one; nil after answering `unauthenticated`.
    func loggedInUser() -> Account? {
        guard let user = session.user else {
            fail(.unauthenticated)
            return nil
        }
        return user
    }

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
        if let id { connection.sendError(error, id: id) }
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
    /// It starts once the connection's contacts writes sent before it are answered: a log-out must not cut off
    /// the writes that came first.
    func asAuthChange(_ body: @escaping (_ answer: @escaping (Result<JSONValue, RosterError>) -> Void) -> Void) {
        beginAuthChange()
        session.afterRunningWrites { body { result in self.finish(result) } }
    }

    private func end() {
        connection.requestFinished()
        guard isAuthChange else { return }
        session.authChangesRunning -= 1
        connection.authChangeEnded()
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
        connection.requestAnswered()
        return true
    }
}
