import Glibc
import RosterClient
import RosterProtocol

/// The daemon's side of one connection, played by the test itself: a listening socket in a fresh directory,
/// the accepted connection, and whole lines both ways. A test writes what the client is to read before the
/// client reads it, so nothing waits for another thread or for time to pass.
final class FakeDaemon {
    let directory: String
    let path: String
    private let listener: Int32
    private var peer: Int32 = -1
    private var unread: [UInt8] = []

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    init() throws {
        var template = Array("/tmp/roster-client-tests-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ $0.baseAddress.flatMap { mkdtemp($0) } }) else {
            throw Failure(description: "mkdtemp: errno \(errno)")
        }
        directory = String(cString: made)
        path = directory + "/roster.sock"
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0, var address = UnixSocketAddress.make(path) else {
            throw Failure(description: "socket: errno \(errno)")
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0, listen(listener, 8) == 0 else { throw Failure(description: "bind/listen: errno \(errno)") }
    }

    deinit {
        if peer >= 0 { Glibc.close(peer) }
        Glibc.close(listener)
        unlink(path)
        rmdir(directory)
    }

    /// A client connected to this daemon, and the daemon's end accepted (the kernel completed the connection
    /// into the backlog, so `accept` does not wait).
    func connect() throws -> ClientConnection {
        let client = try ClientConnection(socketPath: path)
        peer = accept(listener, nil, nil)
        guard peer >= 0 else { throw Failure(description: "accept: errno \(errno)") }
        return client
    }

    /// Writes `text` to the client as it is: whole lines, half lines, or several at once.
    func write(_ text: String) throws {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { send(peer, $0.baseAddress.map { $0 + offset }, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { throw Failure(description: "send: errno \(errno)") }
            offset += written
        }
    }

    /// The next line the client sent, without its newline. The client wrote it before this is called, so the
    /// poll's bound is only there to turn a missing line into a failure instead of a hang.
    func readLine() throws -> String {
        var chunk = [UInt8](repeating: 0, count: 4_096)
        while true {
            if let newline = unread.firstIndex(of: 0x0A) {
                let line = String(decoding: unread[..<newline], as: UTF8.self)
                unread.removeSubrange(...newline)
                return line
            }
            var entry = pollfd(fd: peer, events: Int16(POLLIN), revents: 0)
            guard Glibc.poll(&entry, 1, 5_000) == 1 else { throw Failure(description: "the client sent no line") }
            let count = chunk.withUnsafeMutableBytes { recv(peer, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw Failure(description: "the client closed the connection") }
            unread += chunk[..<count]
        }
    }

    /// Hangs up on the client.
    func close() {
        if peer >= 0 { Glibc.close(peer) }
        peer = -1
    }
}
