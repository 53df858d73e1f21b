import Glibc

/// One daemon per database: an exclusive `flock` on `roster.db.lock` beside the database, held for the
/// daemon's life, with the holder's PID written in it (as PostgreSQL's `postmaster.pid`) so that a second
/// daemon can say who is in the way.
///
/// A second daemon with its own connections would keep its own in-memory state (the username directory) that
/// the first one's writes make stale. SQLite's own locks do not stop it, since both may legally share the file.
/// `flock` is released by the kernel when the holder dies, however it dies, so a crash never leaves it held.
/// An offline `rosterd --backup` does not take this lock: it only reads, through SQLite's locking, which is
/// safe beside a running daemon, and holding the lock would stop a daemon from starting during a long backup.
public final class DatabaseLock {
    /// Why the lock could not be taken.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// Another process holds it; `pid` is what that process wrote, if it could be read.
        case heldBy(pid: Int32?, lockPath: String)
        /// The lock file could not be opened or locked.
        case system(errno: Int32, call: String, lockPath: String)

        public var description: String {
            switch self {
            case let .heldBy(pid, lockPath):
                let holder = pid.map { "the rosterd with PID \($0)" } ?? "another process"
                return "the database is in use by \(holder) (it holds \(lockPath)); stop it first"
            case let .system(errno, call, lockPath):
                return "cannot take the lock \(lockPath): \(call): \(String(cString: strerror(errno)))"
            }
        }
    }

    private var descriptor: Int32
    /// Where the lock lives.
    public let path: String

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    /// Takes the lock for the database at `databasePath` without waiting, and writes our PID into it.
    public static func acquire(databasePath: String) throws(Failure) -> DatabaseLock {
        let path = DatabaseFiles(path: databasePath).lockPath
        // O_NOFOLLOW: a symlink planted under this name must not make us create or truncate another file.
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw .system(errno: errno, call: "open", lockPath: path) }
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            let holder = readPID(descriptor)
            close(descriptor)
            if code == EWOULDBLOCK { throw .heldBy(pid: holder, lockPath: path) }
            throw .system(errno: code, call: "flock", lockPath: path)
        }
        let lock = DatabaseLock(descriptor: descriptor, path: path)
        let text = Array("\(getpid())\n".utf8)
        // The PID is a courtesy for the next daemon's message; the lock itself is the flock, so a failed
        // write is no reason not to serve.
        if ftruncate(descriptor, 0) == 0 {
            _ = text.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        }
        return lock
    }

    /// Releases the lock (the kernel does the same when the process ends).
    ///
    /// Unlocked explicitly before the close: a `flock` belongs to the open file description, and a child this
    /// process is spawning holds a copy of every descriptor, `O_CLOEXEC` ones included, until its exec. A close
    /// alone left the lock held through that copy, and a daemon reopening the database in that instant was
    /// refused. `LOCK_UN` on any copy releases it for all of them.
    public func release() {
        guard descriptor >= 0 else { return }
        flock(descriptor, LOCK_UN)
        close(descriptor)
        descriptor = -1
    }

    deinit { release() }

    private static func readPID(_ descriptor: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 16)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        let text = String(decoding: buffer[..<count], as: UTF8.self).split(separator: "\n").first ?? ""
        guard let pid = Int32(text), pid > 0 else { return nil }
        return pid
    }
}
