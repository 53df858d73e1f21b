import Glibc
import RosterCore
import RosterRuntime
import Testing
@testable import RosterServer

/// The listening socket on a real loop: every pending connection is accepted and handed on, and once closed
/// nothing more is.
@Suite("The connection acceptor")
struct ConnectionAcceptorTests {
    private func connect(to path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else { throw SystemError(errno: errno, call: "connect") }
        return fd
    }

    @Test func acceptsEveryPendingConnectionAndNoneOnceClosed() throws {
        let loop = try EventLoop(signals: [])
        let path = "/tmp/roster-acceptor-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        defer { unlink(path) }
        let acceptor = ConnectionAcceptor(loop: loop, logger: Logger(level: .emerg))
        var accepted: [Int32] = []
        acceptor.onAccept = { accepted.append($0) }
        try acceptor.listen(on: UnixListener.bind(path: path))
        #expect(acceptor.isListening)
        let clients = try (0..<3).map { _ in try connect(to: path) }
        defer { clients.forEach { _ = close($0) } }
        for _ in 0..<5 where accepted.count < 3 { try loop.runOnce(timeoutMs: 100) }
        #expect(accepted.count == 3)
        for fd in accepted {
            #expect(fcntl(fd, F_GETFL) & O_NONBLOCK != 0, "accepted non-blocking")
            #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0, "and close-on-exec")
            close(fd)
        }
        acceptor.close()
        #expect(!acceptor.isListening)
        #expect(throws: SystemError.self) { try connect(to: path) }
    }
}
