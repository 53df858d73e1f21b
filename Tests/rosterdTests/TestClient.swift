import CLinux
import Glibc
import RosterProtocol

/// A blocking line client for tests: raw bytes out, parsed lines in, with a receive timeout so a
/// missing answer fails the test instead of hanging it.
final class TestClient {
    private(set) var fd: Int32
    private var buffer: [UInt8] = []
    /// Events seen while waiting for answers, in arrival order.
    private(set) var events: [JSONValue] = []
    private var nextID = 1_000

    init(path: String, timeoutSeconds: Int = 10) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HarnessError(description: "socket: \(errno)") }
        let code = UnixSocketAddress.connect(fd, to: path)
        guard code == 0 else {
            // A class whose throwing init fails after every property is set still runs deinit: mark the fd gone
            // so it is not closed twice (the number may already belong to another thread's file).
            Glibc.close(fd)
            fd = -1
            throw HarnessError(description: "connect \(path): \(String(cString: strerror(code)))")
        }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close() }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress.map { $0 + offset }, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw HarnessError(description: "send failed: \(errno)") }
            offset += written
        }
    }

    func shutdownWrite() { Glibc.shutdown(fd, Int32(SHUT_WR)) }

    /// The smallest receive buffer the kernel allows, so a peer that does not read backs the daemon up at once.
    func shrinkReceiveBuffer() {
        var small: Int32 = 4096
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
    }

    /// The next line as raw text without its newline, or nil at end of stream.
    func readRawLine() throws -> String? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = Array(buffer[..<newline])
                buffer.removeFirst(newline + 1)
                return String(decoding: line, as: UTF8.self)
            }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 { throw HarnessError(description: "no answer within the timeout (errno \(errno))") }
            if count == 0 { return nil }
            buffer += chunk[..<count]
        }
    }

    func readLine() throws -> JSONValue {
        guard let line = try readRawLine() else { throw HarnessError(description: "connection closed") }
        return try JSONParser.parse(Array(line.utf8))
    }

    /// Sends a request and returns its answer, keeping any events that arrive first.
    func call(_ method: String, _ params: JSONValue = [:]) throws -> JSONValue {
        nextID += 1
        let id = nextID
        try send(JSONWriter.encode(["id": .int(id), "method": .string(method), "params": params]) + [0x0A])
        while true {
            let message = try readLine()
            if message["id"] == .int(id) { return message }
            if message["method"] == "event" { events.append(message) } else {
                throw HarnessError(description: "unexpected line while waiting for \(id): \(message)")
            }
        }
    }

    /// The params of the next event that satisfies `matches`, skipping (and keeping) the others.
    func waitForEvent(_ matches: (JSONValue) -> Bool) throws -> JSONValue {
        if let index = events.firstIndex(where: { matches($0["params"] ?? .null) }) {
            return events.remove(at: index)["params"] ?? .null
        }
        while true {
            let message = try readLine()
            guard message["method"] == "event" else {
                throw HarnessError(description: "unexpected answer while waiting for an event: \(message)")
            }
            if matches(message["params"] ?? .null) { return message["params"] ?? .null }
            events.append(message)
        }
    }

    /// The next `field` event of `field` whose state is final or `state`, as the client would render it.
    func waitForField(_ field: String, state: String) throws -> JSONValue {
        try waitForEvent { $0["type"] == "field" && $0["field"] == .string(field) && $0["state"] == .string(state) }
    }

    /// Events seen so far (params only), then forgets them.
    func takeEvents() -> [JSONValue] {
        defer { events = [] }
        return events.map { $0["params"] ?? .null }
    }

    /// Whether the server closed the connection (reads end of stream) within the timeout.
    func readsEndOfStream() throws -> Bool {
        try readRawLine() == nil
    }
}
