import CLinux
import Glibc
import RosterProtocol

/// Why talking to the daemon failed, phrased for the person at the terminal.
public enum ClientError: Error, CustomStringConvertible {
    case daemonNotRunning(socket: String)
    case permissionDenied(socket: String)
    case connectFailed(socket: String, errno: Int32)
    case connectionClosed
    case timedOut
    case malformedAnswer(String)

    public var description: String {
        switch self {
        case .daemonNotRunning(let socket): "rosterd is not running (no one listens on \(socket))"
        case .permissionDenied(let socket): "permission denied on \(socket) (are you in the roster group?)"
        case .connectFailed(let socket, let code): "cannot connect to \(socket): \(String(cString: strerror(code)))"
        case .connectionClosed: "rosterd closed the connection"
        case .timedOut: "rosterd did not answer in time"
        case .malformedAnswer(let line): "rosterd sent something that is not JSON-RPC: \(line.prefix(200))"
        }
    }
}

/// A JSON-RPC error answer as the client receives it.
public struct RemoteError: Error, CustomStringConvertible {
    public let code: Int64
    public let message: String
    public let reason: String
    public let data: JSONValue

    public var description: String { "\(message) (\(reason))" }
}

/// A blocking connection to rosterd: send requests, wait for their answers by id, collect events on the way.
public final class ClientConnection {
    private var fd: Int32
    private var framer = LineFramer(maxLineBytes: 64 << 20)
    private var pendingLines: [[UInt8]] = []
    private var nextID: Int64 = 1
    /// Events received while waiting for answers, oldest first; `nextEvent()` drains them.
    public private(set) var bufferedEvents: [JSONValue] = []

    public init(socketPath: String) throws(ClientError) {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .connectFailed(socket: socketPath, errno: errno) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let fits = withUnsafeMutableBytes(of: &address.sun_path) { raw -> Bool in
            let bytes = Array(socketPath.utf8)
            guard bytes.count < raw.count else { return false }
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
            return true
        }
        guard fits else {
            // A class whose throwing init fails after every property is set still runs deinit: mark the fd gone
            // so it is not closed twice (the number may already belong to another thread's file).
            Glibc.close(fd)
            fd = -1
            throw .connectFailed(socket: socketPath, errno: ENAMETOOLONG)
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            // deinit still runs after a failed init: mark the fd gone so it is not closed twice.
            Glibc.close(fd)
            fd = -1
            switch code {
            case ENOENT, ECONNREFUSED: throw .daemonNotRunning(socket: socketPath)
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

    /// Sends a request and waits for its answer; events that arrive first are kept in `bufferedEvents`.
    public func call(_ method: String, _ params: JSONValue = .object([])) throws(ClientError) -> Result<JSONValue, RemoteError> {
        let id = nextID
        nextID += 1
        try sendLine(.object([("jsonrpc", "2.0"), ("id", .int(id)), ("method", .string(method)), ("params", params)]))
        while true {
            let message = try readMessage()
            if message["method"] == "event", let params = message["params"] {
                bufferedEvents.append(params)
                continue
            }
            guard message["id"]?.int64Value == id else { continue }
            if let result = message["result"] { return .success(result) }
            let error = message["error"]
            return .failure(RemoteError(code: error?["code"]?.int64Value ?? 0,
                                        message: error?["message"]?.stringValue ?? "",
                                        reason: error?["data"]?["reason"]?.stringValue ?? "",
                                        data: error?["data"] ?? .null))
        }
    }

    /// The next event's params, waiting for one if none is buffered.
    public func nextEvent() throws(ClientError) -> JSONValue {
        if !bufferedEvents.isEmpty { return bufferedEvents.removeFirst() }
        while true {
            let message = try readMessage()
            if message["method"] == "event", let params = message["params"] { return params }
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

    private func readMessage() throws(ClientError) -> JSONValue {
        let line = try readLine()
        do {
            return try JSONParser.parse(line)
        } catch {
            throw .malformedAnswer(String(decoding: line, as: UTF8.self))
        }
    }

    private func readLine() throws(ClientError) -> [UInt8] {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while pendingLines.isEmpty {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { throw .timedOut }
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
