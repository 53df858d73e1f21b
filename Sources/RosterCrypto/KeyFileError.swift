/// Why the daemon's key file was refused or could not be made. Descriptions name the path, never the key.
public enum KeyFileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The path is a symbolic link, which could point the daemon at a file somebody else controls.
    case symlink(path: String)
    /// The path is a directory, device, FIFO or socket.
    case notRegularFile(path: String)
    /// The file belongs to another uid than the daemon's effective one.
    case notOwned(path: String, owner: UInt32, expected: UInt32)
    /// Group or others have some permission on the file (`mode` is the permission bits).
    case tooPermissive(path: String, mode: UInt32)
    /// The file does not hold exactly 32 bytes.
    case wrongSize(path: String, size: Int)
    /// A system call failed (`call` and `errno`).
    case system(path: String, call: String, errno: Int32)

    /// A stable reason string for logs and tests.
    public var reason: String {
        switch self {
        case .symlink: return "symlink"
        case .notRegularFile: return "not_regular_file"
        case .notOwned: return "not_owned"
        case .tooPermissive: return "too_permissive"
        case .wrongSize: return "wrong_size"
        case .system: return "system"
        }
    }

    /// The key file in question.
    public var path: String {
        switch self {
        case .symlink(let path), .notRegularFile(let path), .notOwned(let path, _, _), .tooPermissive(let path, _),
             .wrongSize(let path, _), .system(let path, _, _):
            return path
        }
    }

    public var description: String {
        let detail: String
        switch self {
        case .symlink:
            detail = "is a symbolic link"
        case .notRegularFile:
            detail = "is not a regular file"
        case .notOwned(_, let owner, let expected):
            detail = "is owned by uid \(owner), not the daemon's uid \(expected)"
        case .tooPermissive(_, let mode):
            detail = "has mode \(String(mode, radix: 8)); group and others must have no access (chmod 600)"
        case .wrongSize(_, let size):
            detail = "holds \(size) bytes, not \(SecretKey.length)"
        case .system(_, let call, let errno):
            detail = "\(call) failed (errno \(errno))"
        }
        return "key file \(path) \(detail) [\(reason)]"
    }
}
