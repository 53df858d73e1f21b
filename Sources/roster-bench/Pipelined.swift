import CLinux
import Glibc

/// Throughput: many connections, each keeping a fixed number of requests in flight; a new request goes out
/// for every answer that comes back.
enum Pipelined {
    /// Answers per second over `seconds`, after `warmupSeconds` of the same load.
    static func measure(socketPath: String, connections: Int, depth: Int, request: [UInt8],
                        warmupSeconds: Double, seconds: Double) throws(BenchError) -> Double {
        let epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epollFD >= 0 else { throw BenchError("epoll_create1 failed") }
        var fds: [Int32] = []
        defer {
            for fd in fds { close(fd) }
            close(epollFD)
        }
        var buffers: [LineBuffer] = []
        let burst = Array((0..<depth).map { _ in request }.joined())
        for index in 0..<connections {
            let fd = try UnixSocket.connect(socketPath, nonBlocking: true)
            fds.append(fd)
            buffers.append(LineBuffer())
            var event = epoll_event()
            event.events = EPOLLIN.rawValue
            event.data.u64 = UInt64(index)
            epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event)
        }
        for fd in fds { try UnixSocket.writeAll(fd, burst) }
        let started = Clock.now()
        let measureFrom = started + UInt64(warmupSeconds * 1e9)
        let end = measureFrom + UInt64(seconds * 1e9)
        var answered = 0
        var events = [epoll_event](repeating: epoll_event(), count: 256)
        var now = started
        while now < end {
            let count = events.withUnsafeMutableBufferPointer { epoll_wait(epollFD, $0.baseAddress, 256, 100) }
            now = Clock.now()
            for slot in 0..<Int(max(count, 0)) {
                let index = Int(events[slot].data.u64)
                let fd = fds[index]
                var lines = 0
                readLoop: while true {
                    switch buffers[index].read(from: fd) {
                    case .data: lines += buffers[index].drainLines { _ in }
                    case .wouldBlock: break readLoop
                    case .closed: throw BenchError("the server closed a pipelined connection")
                    }
                }
                if now >= measureFrom { answered += lines }
                if lines > 0 {
                    try UnixSocket.writeAll(fd, Array(burst[0..<(lines * request.count)]))
                }
            }
        }
        return Double(answered) / (Double(now - measureFrom) / 1e9)
    }
}
