import Glibc

/// A `sockaddr_un` for a filesystem path, shared by the listener, the client and the tests.
public enum UnixSocketAddress {
    /// The address of `path`, or nil when the path does not fit `sun_path` (107 bytes and a NUL).
    public static func make(_ path: String) -> sockaddr_un? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let fits = withUnsafeMutableBytes(of: &address.sun_path) { raw -> Bool in
            let bytes = Array(path.utf8)
            guard bytes.count < raw.count else { return false }
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
            return true
        }
        return fits ? address : nil
    }

    /// `connect(2)` to `path`; the errno of a failure, or 0.
    public static func connect(_ fd: Int32, to path: String) -> Int32 {
        guard var address = make(path) else { return ENAMETOOLONG }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return result == 0 ? 0 : errno
    }
}
