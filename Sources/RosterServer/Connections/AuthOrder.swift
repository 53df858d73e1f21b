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
/// Bounded per connection (and, through `Dispatcher.heldRequestBytes`, in total): a peer that pipelines past it gets
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
