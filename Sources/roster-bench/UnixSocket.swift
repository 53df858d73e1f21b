import CLinux
import Glibc
import RosterProtocol

/// Client-side socket calls, blocking unless told otherwise.
enum UnixSocket {
    static func connect(_ path: String, nonBlocking: Bool = false) throws(BenchError) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket: \(String(cString: strerror(errno)))") }
        guard var address = UnixSocketAddress.make(path) else { throw BenchError("socket path too long: \(path)") }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw BenchError("connect \(path): \(String(cString: strerror(code)))")
        }
        // Connecting blocks while the backlog is full; only then does the socket turn non-blocking.
        if nonBlocking { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        return fd
    }

    /// Writes every byte (a non-blocking socket waits in `poll` when full).
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(BenchError) {
        let failure = bytes.withUnsafeBytes { raw -> BenchError? in
            do throws(BenchError) {
                try writeAll(fd, raw)
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
    }

    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(BenchError) {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(fd, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
            if written > 0 {
                offset += written
            } else if written < 0 && errno == EAGAIN {
                var watch = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&watch, 1, 1_000)
            } else if written < 0 && errno == EINTR {
                continue
            } else {
                throw BenchError("write: \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Reads until one whole line arrived and returns it (blocking socket).
    static func readLine(_ fd: Int32, _ buffer: inout LineBuffer) throws(BenchError) -> [UInt8] {
        while true {
            var line: [UInt8]?
            // One line at a time: a reply that came with a second one keeps the second for the next call.
            buffer.drainLines(limit: 1) { line = Array($0) }
            if let line { return line }
            if buffer.read(from: fd) == .closed { throw BenchError("the server closed the connection") }
        }
    }

    /// Raises the soft descriptor limit to the hard one: thousands of connections need thousands of fds.
    static func raiseDescriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1_024 }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        return Int(limit.rlim_cur)
    }
}
