import RosterRuntime
import CLinux
import Glibc
import RosterProtocol

/// Why the daemon could not listen; each case reads as a sentence an administrator can act on.
public enum ListenerError: Error, CustomStringConvertible {
    case pathTooLong(String)
    case inUse(String)
    case notASocket(String)
    case system(String, SystemError)

    public var description: String {
        switch self {
        case .pathTooLong(let path): "socket path is longer than a Unix socket allows (107 bytes): \(path)"
        case .inUse(let path): "another process is already listening on \(path); stop it first or pass --socket"
        case .notASocket(let path): "\(path) exists and is not a socket; refusing to replace it"
        case .system(let path, let error): "cannot listen on \(path): \(error)"
        }
    }
}

/// A listening Unix stream socket that removes its file on close only if the file is still the one it made.
public final class UnixListener {
    public let fd: Int32
    public let path: String
    private let ownedInode: ino_t?

    /// Adopts an already-listening socket (systemd socket activation); its file is never ours to remove.
    public init(adopting fd: Int32, path: String) {
        self.fd = fd
        self.path = path
        self.ownedInode = nil
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
    }

    private init(fd: Int32, path: String, inode: ino_t) {
        self.fd = fd
        self.path = path
        self.ownedInode = inode
    }

    /// Binds `path` with `mode`, replacing a stale socket file (nobody accepting) but never a live one.
    public static func bind(path: String, mode: mode_t = 0o660, backlog: Int32 = 4096) throws(ListenerError) -> UnixListener {
        guard var address = UnixSocketAddress.make(path) else { throw .pathTooLong(path) }
        try removeIfStale(path)
        let fd: Int32
        do {
            fd = try Syscall.blocking("socket") {
                socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
            }
        } catch { throw .system(path, error) }
        // The umask makes the file appear with its final mode, leaving no moment where it is too open.
        let previousMask = umask(~mode & 0o777)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        let bindErrno = errno
        umask(previousMask)
        guard bound == 0 else {
            Glibc.close(fd)
            if bindErrno == EADDRINUSE { throw .inUse(path) }
            throw .system(path, SystemError(errno: bindErrno, call: "bind"))
        }
        var info = stat()
        guard stat(path, &info) == 0, listen(fd, backlog) == 0 else {
            let error = SystemError(errno: errno, call: "listen")
            Glibc.close(fd)
            unlink(path)
            throw .system(path, error)
        }
        return UnixListener(fd: fd, path: path, inode: info.st_ino)
    }

    /// Stops listening, and removes the socket file if this process created it and nobody replaced it since.
    public func close() {
        _ = Glibc.close(fd)
        guard let ownedInode else { return }
        var info = stat()
        if stat(path, &info) == 0, info.st_ino == ownedInode { unlink(path) }
    }

    private static func removeIfStale(_ path: String) throws(ListenerError) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard info.st_mode & S_IFMT == S_IFSOCK else { throw .notASocket(path) }
        if isAccepting(path) { throw .inUse(path) }
        unlink(path)
    }

    /// Only ECONNREFUSED proves the file was left by a dead daemon. Anything else (a successful connect, EAGAIN
    /// from a full backlog, EACCES from a socket we may not use) means someone may be serving it: hands off.
    private static func isAccepting(_ path: String) -> Bool {
        let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard probe >= 0 else { return true }
        defer { Glibc.close(probe) }
        return UnixSocketAddress.connect(probe, to: path) != ECONNREFUSED
    }
}

/// Who is on the other end of a Unix socket, from SO_PEERCRED.
public struct PeerCredentials: Sendable, Equatable {
    public let pid: Int32
    public let uid: UInt32
    public let gid: UInt32

    public static func of(fd: Int32) -> PeerCredentials? {
        var credentials = roster_ucred()
        var length = socklen_t(MemoryLayout<roster_ucred>.size)
        guard getsockopt(fd, SOL_SOCKET, ROSTER_SO_PEERCRED, &credentials, &length) == 0 else { return nil }
        return PeerCredentials(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid)
    }
}
