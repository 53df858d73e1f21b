import CLinux
import Glibc

/// Idle memory: the server's RSS growth for connections that said hello and then sit still, per connection.
enum IdleMemory {
    /// Bytes of RSS per connection, measured as the growth from a warmed-up baseline.
    static func measure(server: ServerProcess, connections: Int) throws(BenchError) -> Double {
        // One session first, so code paths and buffers touched by any hello are in the baseline.
        let probe = try UnixSocket.connect(server.socketPath)
        _ = try RoundTrips.call(fd: probe, Requests.hello(id: 1, debounceMs: 0))
        close(probe)
        usleep(100_000)
        let baseline = server.residentBytes()

        var fds: [Int32] = []
        defer { for fd in fds { close(fd) } }
        let hello = Requests.hello(id: 1, debounceMs: 0)
        var pending = Set<Int32>()
        for _ in 0..<connections {
            let fd = try UnixSocket.connect(server.socketPath, nonBlocking: true)
            fds.append(fd)
            try UnixSocket.writeAll(fd, hello)
            pending.insert(fd)
            if pending.count >= 500 { try awaitAnswers(&pending) }
        }
        try awaitAnswers(&pending)
        usleep(200_000)
        let loaded = server.residentBytes()
        return Double(max(0, loaded - baseline)) / Double(connections)
    }

    /// Waits until every fd in `pending` has its one answer line.
    private static func awaitAnswers(_ pending: inout Set<Int32>) throws(BenchError) {
        let deadline = Clock.now() + 60_000_000_000
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while !pending.isEmpty {
            guard Clock.now() < deadline else { throw BenchError("\(pending.count) hellos unanswered after 60 s") }
            var watches = pending.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            _ = poll(&watches, nfds_t(watches.count), 100)
            for watch in watches where watch.revents != 0 {
                let count = buffer.withUnsafeMutableBytes { read(watch.fd, $0.baseAddress, $0.count) }
                if count > 0, buffer[..<count].contains(0x0A) { pending.remove(watch.fd) }
                if count == 0 { throw BenchError("the server closed an idle connection (a connection limit?)") }
            }
        }
    }
}
