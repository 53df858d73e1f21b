import CLinux
import Glibc
import RosterProtocol

/// A connection to rosterd: send requests, await answers by id, and take events as they come.
///
/// Blocking by design (a CLI has one thing to do at a time), but every wait has a timeout, and `fileDescriptor`
/// with `hasBufferedInput` lets an interactive UI multiplex the socket with stdin in its own `poll`.
public final class ClientConnection {
    private var fd: Int32
    private var framer = LineFramer(maxLineBytes: 64 << 20)
    private var pendingLines: [[UInt8]] = []
    private var nextID: Int64 = 1
    /// Answers that arrived while `call` waited for another id, so an interleaved `send` is never lost.
    private var parkedAnswers: [Int64: Result<JSONValue, RemoteError>] = [:]
    /// Events received while waiting for answers, oldest first; `nextEvent` and `receive` drain them.
    public private(set) var bufferedEvents: [JSONValue] = []
    /// How long `call` waits for its answer; nil waits for ever (a submit may queue behind password hashing).
    public var answerTimeoutMs: Int32? = 30_000
    public let socketPath: String

    /// Connects to the daemon's socket, turning the usual failures into errors that name the path.
    public init(socketPath: String) throws(ClientError) {
        self.socketPath = socketPath
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .connectFailed(socket: socketPath, errno: errno) }
        let code = UnixSocketAddress.connect(fd, to: socketPath)
        if code != 0 {
            // A class whose throwing init fails after every property is set still runs deinit: mark the fd gone
            // so it is not closed twice (the number may already belong to another thread's file).
            Glibc.close(fd)
            fd = -1
            switch code {
            // ENOTSOCK/ECONNREFUSED: a stale file of a killed daemon reads the same as no file to a user.
            case ENOENT, ECONNREFUSED, ENOTSOCK: throw .daemonNotRunning(socket: socketPath)
            case EACCES, EPERM: throw .permissionDenied(socket: socketPath)
            default: throw .connectFailed(socket: socketPath, errno: code)
            }
        }
    }

    deinit { close() }

    public func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    /// The socket, for a caller's own `poll`; check `hasBufferedInput` first, since read-ahead lines are not on it.
    public var fileDescriptor: Int32 { fd }

    /// Whether lines or events are already read and waiting, so `poll` on the socket would not report them.
    public var hasBufferedInput: Bool { !pendingLines.isEmpty || !bufferedEvents.isEmpty || !parkedAnswers.isEmpty }

    /// Sends a request without waiting, returning its id; the answer comes from `receive` or `awaitAnswer(id:)`.
    @discardableResult
    public func send(_ method: String, _ params: JSONValue = .object([])) throws(ClientError) -> Int64 {
        let id = nextID
        nextID += 1
        try sendLine(.object([("jsonrpc", "2.0"), ("id", .int(id)), ("method", .string(method)), ("params", params)]))
        return id
    }

    /// Sends a request and waits for its answer; events that arrive first are kept for `receive`/`nextEvent`.
    public func call(_ method: String, _ params: JSONValue = .object([])) throws(ClientError) -> Result<JSONValue, RemoteError> {
        try awaitAnswer(id: send(method, params))
    }

    /// Sends a request that is the only one outstanding and waits for its answer.
    ///
    /// A request the daemon could not read at all (`request_too_large`, `parse_error`) is answered with a null
    /// id, which `call` cannot match and would wait past until its timeout. With nothing else in flight such
    /// an answer can only be about this request, so it is returned as this request's failure.
    public func callAlone(_ method: String, _ params: JSONValue = .object([])) throws(ClientError) -> Result<JSONValue, RemoteError> {
        try awaitAnswer(id: send(method, params), takingUnaddressedErrors: true)
    }

    /// Waits for the answer to `id`, parking other answers and buffering events on the way.
    public func awaitAnswer(id: Int64) throws(ClientError) -> Result<JSONValue, RemoteError> {
        try awaitAnswer(id: id, takingUnaddressedErrors: false)
    }

    private func awaitAnswer(id: Int64, takingUnaddressedErrors: Bool) throws(ClientError) -> Result<JSONValue, RemoteError> {
        if let parked = parkedAnswers.removeValue(forKey: id) { return parked }
        let deadline = answerTimeoutMs.map { Deadline(afterMs: $0) }
        while true {
            guard let message = try readMessage(timeoutMs: deadline?.remainingMs ?? -1) else { throw .timedOut }
            if takingUnaddressedErrors, message["id"] == .null, let error = message["error"] {
                return .failure(RemoteError(answerError: error))
            }
            switch classify(message) {
            case .event(let params)?: bufferedEvents.append(params)
            case .answer(let answered, let result)? where answered == id: return result
            case .answer(let answered, let result)?: parkedAnswers[answered] = result
            case nil: continue
            }
        }
    }

    /// The next event or answer, waiting at most `timeoutMs` (-1: for ever); nil when the time ran out.
    public func receive(timeoutMs: Int32) throws(ClientError) -> Incoming? {
        if !bufferedEvents.isEmpty { return .event(bufferedEvents.removeFirst()) }
        if let (id, result) = parkedAnswers.first {
            parkedAnswers[id] = nil
            return .answer(id: id, result)
        }
        let deadline = Deadline(afterMs: timeoutMs)
        while true {
            guard let message = try readMessage(timeoutMs: timeoutMs < 0 ? -1 : deadline.remainingMs) else { return nil }
            if let incoming = classify(message) { return incoming }
        }
    }

    /// The next event's params, waiting at most `timeoutMs` (-1: for ever); answers on the way are parked.
    public func waitForEvent(timeoutMs: Int32) throws(ClientError) -> JSONValue? {
        let deadline = Deadline(afterMs: timeoutMs)
        if !bufferedEvents.isEmpty { return bufferedEvents.removeFirst() }
        while true {
            guard let message = try readMessage(timeoutMs: timeoutMs < 0 ? -1 : deadline.remainingMs) else { return nil }
            switch classify(message) {
            case .event(let params)?: return params
            case .answer(let id, let result)?: parkedAnswers[id] = result
            case nil: continue
            }
        }
    }

    /// The next event's params, waiting for ever.
    public func nextEvent() throws(ClientError) -> JSONValue {
        while true {
            if let event = try waitForEvent(timeoutMs: -1) { return event }
        }
    }

    public func sendLine(_ value: JSONValue) throws(ClientError) {
        var bytes = JSONWriter.encode(value)
        bytes.append(0x0A)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress.map { $0 + offset }, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw .connectionClosed }
            offset += written
        }
    }

    private func classify(_ message: JSONValue) -> Incoming? {
        if message["method"] == "event", let params = message["params"] { return .event(params) }
        // Answers with a null or foreign id (e.g. a parse error about a line we never sent) concern nobody here.
        guard let id = message["id"]?.int64Value else { return nil }
        if let result = message["result"] { return .answer(id: id, .success(result)) }
        return .answer(id: id, .failure(RemoteError(answerError: message["error"])))
    }

    private func readMessage(timeoutMs: Int32) throws(ClientError) -> JSONValue? {
        guard let line = try readLine(timeoutMs: timeoutMs) else { return nil }
        do {
            return try JSONParser.parse(line)
        } catch {
            throw .malformedAnswer(String(decoding: line, as: UTF8.self))
        }
    }

    private func readLine(timeoutMs: Int32) throws(ClientError) -> [UInt8]? {
        let deadline = Deadline(afterMs: timeoutMs)
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while pendingLines.isEmpty {
            guard fd >= 0 else { throw .connectionClosed }
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = Glibc.poll(&entry, 1, timeoutMs < 0 ? -1 : deadline.remainingMs)
            if ready < 0 && errno == EINTR { continue }
            if ready == 0 { return nil }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            guard count > 0 else { throw .connectionClosed }
            var outputs: [LineFramer.Output] = []
            chunk.withUnsafeBytes { framer.feed(UnsafeRawBufferPointer(rebasing: $0[..<count]), into: &outputs) }
            for output in outputs {
                if case .line(let line) = output { pendingLines.append(line) }
            }
        }
        return pendingLines.removeFirst()
    }
}

/// A point on the monotonic clock, so repeated waits share one budget instead of each starting afresh.
struct Deadline {
    private let end: Int64

    init(afterMs: Int32) { end = Deadline.nowMs() + Int64(max(afterMs, 0)) }

    /// Milliseconds left, never negative (0 means "look, don't wait").
    var remainingMs: Int32 { Int32(clamping: max(end - Deadline.nowMs(), 0)) }

    static func nowMs() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}
