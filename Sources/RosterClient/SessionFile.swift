import Glibc

/// Where a log-in's token is kept between commands: `$XDG_RUNTIME_DIR/roster/session`, mode 0600.
///
/// The runtime directory is per user, on tmpfs and removed at log-out, which is the lifetime a session token
/// should have. Without XDG_RUNTIME_DIR there is no such place, so callers refuse to store rather than guess.
public struct SessionFile {
    public let path: String
    public let directory: String

    /// Why the token could not be kept or read.
    public enum Failure: Error, CustomStringConvertible {
        case noRuntimeDirectory
        case cannotWrite(path: String, errno: Int32)

        public var description: String {
            switch self {
            case .noRuntimeDirectory:
                "XDG_RUNTIME_DIR is not set, so there is nowhere private to keep the session token "
                    + "(set it, e.g. export XDG_RUNTIME_DIR=/run/user/$(id -u))"
            case .cannotWrite(let path, let code): "cannot write \(path): \(String(cString: strerror(code)))"
            }
        }
    }

    public init(directory: String) {
        self.directory = directory
        path = directory + "/session"
    }

    /// The session file for this environment, or nil when XDG_RUNTIME_DIR is unset or relative.
    public static func forEnvironment(_ environment: [String: String]) -> SessionFile? {
        guard let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") else { return nil }
        return SessionFile(directory: runtime + "/roster")
    }

    /// The stored token, or nil if there is none (or it is unreadable, which reads as logged out).
    public func read() -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 512)
        let count = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        let token = String(decoding: bytes[..<count], as: UTF8.self).filter { !$0.isWhitespace }
        return token.isEmpty ? nil : token
    }

    /// Stores the token with mode 0600 in a 0700 directory, replacing any earlier one atomically.
    public func write(_ token: String) throws(Failure) {
        if mkdir(directory, 0o700) != 0 && errno != EEXIST { throw .cannotWrite(path: directory, errno: errno) }
        let temporary = path + ".tmp"
        unlink(temporary)
        // O_EXCL and O_NOFOLLOW: never write the token through a link someone else planted.
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw .cannotWrite(path: temporary, errno: errno) }
        let bytes = Array((token + "\n").utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let code = errno
        fchmod(fd, 0o600)
        close(fd)
        guard written == bytes.count else {
            unlink(temporary)
            throw .cannotWrite(path: temporary, errno: code)
        }
        guard rename(temporary, path) == 0 else {
            let failure = errno
            unlink(temporary)
            throw .cannotWrite(path: path, errno: failure)
        }
    }

    /// Forgets the token; a missing file is already forgotten.
    public func remove() {
        unlink(path)
    }
}
