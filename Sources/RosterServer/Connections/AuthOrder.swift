import RosterCore
import RosterRuntime
import RosterProtocol

/// How a request stands to a change of who the session is (log-in, resume, log-out, or a log-in or register
/// form's submit) still running on its connection. Every request is carried out with the session as the
/// requests before it left it: one that depends on who the session is waits for the change, and so does
/// everything after it; one that does not (the register rules, typing into the register form) goes ahead, so a
/// slow submit never holds up validation.
enum SessionDependence {
    /// It reads or changes who the session is.
    case identity
    /// It is the same for anyone.
    case none
    /// `form.open`, `form.input`, `form.close`: the contacts and password forms are the logged-in user's, the
    /// others nobody's.
    case form
    /// `form.submit`: it changes who the session is, unless it joins the same form's submit already running.
    case formSubmit
}

/// Lines that arrived after a request that waits for a change of who the session is, in arrival order.
/// Bounded per connection (and, through `Server.heldRequestBytes`, in total): a peer that pipelines past it gets
/// `busy` for the excess.
struct HeldRequests {
    static let maxLines = 1_024
    static let maxBytes = 1 << 20
    static let maxTotalBytes = 64 << 20
    /// What a refused line is told to wait: about one log-in's hashing.
    static let retryAfterMs: Int64 = 250

    private var lines: [[UInt8]] = []
    private var head = 0
    private(set) var byteCount = 0

    var isEmpty: Bool { head == lines.count }
    var count: Int { lines.count - head }
    var first: [UInt8]? { isEmpty ? nil : lines[head] }

    func hasRoom(for line: [UInt8]) -> Bool {
        count < Self.maxLines && byteCount + line.count <= Self.maxBytes
    }

    mutating func append(_ line: [UInt8]) {
        lines.append(line)
        byteCount += line.count
    }

    mutating func removeFirst() {
        guard !isEmpty else { return }
        byteCount -= lines[head].count
        lines[head] = []
        head += 1
        if isEmpty {
            lines = []
            head = 0
        }
    }

    mutating func removeAll() {
        self = HeldRequests()
    }
}

extension Server {
    /// Whether `method` must wait for the changes of who the session is that are still running.
    func mustWait(_ method: Method, params: Params, on session: Session) -> Bool {
        guard session.authChangesRunning > 0 else { return false }
        let form = params.string("form").flatMap(FormName.init(rawValue:))
        switch method.dependence {
        case .identity: return true
        case .none: return false
        case .form: return form == .contacts || form == .password
        case .formSubmit: return !(form.flatMap { session.forms[$0] }?.isSubmitting ?? false)
        }
    }

    /// Keeps `line` until the changes before it are done; past the budget it is answered `busy` at once.
    func hold(_ line: [UInt8], on connection: Connection) {
        let session = connection.session
        guard session.held.hasRoom(for: line), heldRequestBytes + line.count <= HeldRequests.maxTotalBytes else {
            return refuseHeld(line, on: connection)
        }
        session.held.append(line)
        heldRequestBytes += line.count
        // A held line is owed an answer: a half-closed peer waits for it like for a request in flight.
        connection.requestStarted()
    }

    private func refuseHeld(_ line: [UInt8], on connection: Connection) {
        switch RPCRequest.parse(line: line) {
        case .failure(let envelope):
            if envelope.answer { sendError(envelope.error, id: envelope.id, to: connection) }
        case .success(let request):
            if let id = request.id { sendError(.busy(retryAfterMs: HeldRequests.retryAfterMs), id: id, to: connection) }
        }
    }

    /// A change of who the session is was answered: the lines held behind it are served in order, until one
    /// of them has to wait again.
    func authChangeEnded(on connection: Connection) {
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
    func dropHeld(of connection: Connection) {
        heldRequestBytes -= connection.session.held.byteCount
        connection.session.held.removeAll()
    }
}
