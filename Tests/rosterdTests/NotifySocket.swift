import CLinux
import Glibc
import RosterProtocol

/// A datagram socket standing in for systemd's `$NOTIFY_SOCKET`, collecting what the daemon tells it.
final class NotifySocket {
    let path: String
    private let fd: Int32
    private(set) var received: [String] = []

    init(in directory: TemporaryDirectory) throws {
        path = directory.path + "/notify.sock"
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard var address = UnixSocketAddress.make(path) else { throw HarnessError(description: "path too long") }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw HarnessError(description: "cannot bind the notify socket") }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    /// The next datagram holding `state` (waiting up to the timeout), or "" if none came.
    func next(containing state: String) -> String {
        while true {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return "" }
            let datagram = String(decoding: buffer[..<count], as: UTF8.self)
            received.append(datagram)
            if datagram.contains(state) { return datagram }
        }
    }
}
