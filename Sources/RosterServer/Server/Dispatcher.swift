import RosterCore
import RosterRuntime
import RosterProtocol

/// What the dispatcher needs of a connection beyond what a call does: to be told of a request it now owes an
/// answer (a half-closed peer waits for it), whether it closed, and a way to queue a line.
protocol DispatchHost: CallHost {
    /// A request was read (or held) and is owed an answer; `requestFinished()` is its other half.
    func requestStarted()
    var isClosed: Bool { get }
    /// Queues an answer or an error known to be small.
    func sendReply(_ bytes: [UInt8])
    /// Queues a line that `build` appends to the output in place.
    func sendLine(_ build: (inout [UInt8]) -> Void)
}

/// From a line to a method: parses the request, validates its params against the method's spec, and starts it;
/// or answers why it cannot be one.
///
/// RULES
///   • A plain `users.check_username` takes the fast lane (`PlainRequests`), without a copy of the line.
///   • Every request is carried out with the session as the requests before it left it: behind a request that
///     waits for a change of who the session is (see `SessionDependence`), every line of that connection waits,
///     in order, within `HeldRequests`' bounds per connection and in total; past them it is answered `busy`.
///   • A notification (no id) is never answered, not even with an error.
final class Dispatcher<Host: DispatchHost> {
    private var methods: [String: Method<Host>] = [:]
    /// The plain lane, tried before the general path.
    let plain: PlainRequests<Host>
    /// The policy errors are worded under (messages name its limits); a reload replaces it.
    var policy: Policy
    /// `[Server] MaxLineBytes=`, which an oversized line's error names.
    var maxLineBytes: Int
    /// The bytes of every connection's held requests (see `HeldRequests`).
    private(set) var heldRequestBytes = 0

    init(plain: PlainRequests<Host>, policy: Policy, maxLineBytes: Int) {
        self.plain = plain
        self.policy = policy
        self.maxLineBytes = maxLineBytes
    }

    /// Adds `methods` to the table; a name given again replaces the earlier entry.
    func register(_ methods: [Method<Host>]) {
        for method in methods { self.methods[method.spec.name] = method }
    }

    /// Every method's spec, sorted by name, for `rpc.describe`.
    var methodSpecs: [MethodSpec] { methods.values.map(\.spec).sorted { $0.name < $1.name } }

    /// Serves one line; the plain shape of a hot request is answered without a copy of the line. Behind a
    /// request that waits for a change of who the session is, every line waits (see `SessionDependence`).
    func dispatch(line: UnsafeBufferPointer<UInt8>, from connection: Host) {
        guard connection.session.held.isEmpty else { return hold(Array(line), on: connection) }
        // users.check_username is the same whoever the session is, so it need not wait for a log-in.
        if plain.answer(line, from: connection) { return }
        let bytes = Array(line)
        if !serve(bytes, from: connection) { hold(bytes, on: connection) }
    }

    /// Starts the request on `line`, or answers why it cannot be one; false (with nothing done) when it must
    /// wait for a change of who the session is.
    func serve(_ line: [UInt8], from connection: Host) -> Bool {
        switch RPCRequest.parse(line: line) {
        case .failure(let envelope):
            if envelope.answer { sendError(envelope.error, id: envelope.id, to: connection) }
        case .success(let request):
            guard let method = methods[request.method] else {
                if let id = request.id { sendError(.methodNotFound(method: request.method), id: id, to: connection) }
                return true
            }
            // A contacts-only session (a DAV log-in's) calls nothing else, whatever its params; a notification of
            // it does nothing. A request held behind a log-in comes back here, so it is judged as the log-in left
            // the session.
            if connection.session.user != nil, !connection.session.scope.allows(request.method) {
                if let id = request.id { sendError(.forbidden, id: id, to: connection) }
                return true
            }
            let params: Params
            do {
                params = try Params(validating: request.params, against: method.spec.params)
            } catch {
                if let id = request.id { sendError(error, id: id, to: connection) }
                return true
            }
            if mustWait(method.dependence, params: params, on: connection.session) { return false }
            connection.requestStarted()
            method.serve(RequestCall(id: request.id, params: params, connection: connection))
        }
        return true
    }

    func rejectOversizedLine(from connection: Host) {
        sendError(.requestTooLarge(limit: maxLineBytes), id: .null, to: connection)
    }

    /// `error` as the answer to `id`, worded in the session's locale under the policy in force.
    func sendError(_ error: RosterError, id: JSONValue, to connection: Host) {
        var arguments: [String: String] = [:]
        if case .invalidField(let field, _) = error, let name = FieldName.wording(param: field) {
            arguments = name.messageArguments(policy: policy)
        }
        let message = MessageCatalog.message(for: error, locale: connection.session.locale, arguments: arguments)
        connection.sendReply(RPCMessage.error(id: id, error, message: message))
    }

    // MARK: Waiting for a change of who the session is

    /// Whether a method of `dependence` must wait for the changes of who the session is that are still running.
    func mustWait(_ dependence: SessionDependence, params: Params, on session: Session) -> Bool {
        guard session.authChangesRunning > 0 else { return false }
        let form = params.string("form").flatMap(FormName.init(rawValue:))
        switch dependence {
        case .identity: return true
        case .none: return false
        case .form: return form == .contacts || form == .password
        case .formSubmit: return !(form.flatMap { session.forms[$0] }?.isSubmitting ?? false)
        }
    }

    /// Keeps `line` until the changes before it are done; past the budget it is answered `busy` at once.
    func hold(_ line: [UInt8], on connection: Host) {
        let session = connection.session
        guard session.held.hasRoom(for: line), heldRequestBytes + line.count <= HeldRequests.maxTotalBytes else {
            return refuseHeld(line, on: connection)
        }
        session.held.append(line)
        heldRequestBytes += line.count
        // A held line is owed an answer: a half-closed peer waits for it like for a request in flight.
        connection.requestStarted()
    }

    private func refuseHeld(_ line: [UInt8], on connection: Host) {
        switch RPCRequest.parse(line: line) {
        case .failure(let envelope):
            if envelope.answer { sendError(envelope.error, id: envelope.id, to: connection) }
        case .success(let request):
            if let id = request.id { sendError(.busy(retryAfterMs: HeldRequests.retryAfterMs), id: id, to: connection) }
        }
    }

    /// A change of who the session is was answered: the lines held behind it are served in order, until one
    /// of them has to wait again.
    func authChangeEnded(on connection: Host) {
        let session = connection.session
        guard !session.isServingHeld else { return }
        session.isServingHeld = true
        defer { session.isServingHeld = false }
        while !connection.isClosed, let line = session.held.first {
            guard serve(line, from: connection) else { return }
            session.held.removeFirst()
            heldRequestBytes -= line.count
            connection.requestFinished()
        }
    }

    /// A closed connection's held lines go with it.
    func dropHeld(of connection: Host) {
        heldRequestBytes -= connection.session.held.byteCount
        connection.session.held.removeAll()
    }
}

/// The daemon's connections are what it dispatches to.
extension Connection: DispatchHost {}
