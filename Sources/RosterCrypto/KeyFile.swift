import CSodium
import Glibc

/// The daemon's master key file: 32 random bytes, mode 0600, owned by the daemon's uid. Read at start, or made when
/// missing; anything else found at the path is refused rather than trusted.
public enum KeyFile {
    /// The master key in the file at `path`, creating the file first when nothing is there.
    public static func loadOrCreate(at path: String) throws(KeyFileError) -> SecretKey {
        do {
            return try load(at: path)
        } catch .system(_, _, ENOENT) {
            do {
                try create(at: path)
            } catch .system(_, "link", EEXIST) {
                // Another daemon sharing the directory made it first: use theirs.
            }
            return try load(at: path)
        }
    }

    /// The master key in the existing file at `path`, after checking what the file is and who may read it.
    public static func load(at path: String) throws(KeyFileError) -> SecretKey {
        // O_NOFOLLOW refuses a link in the last component; O_NONBLOCK keeps a FIFO from hanging the start.
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            let error = errno
            throw error == ELOOP ? .symlink(path: path) : .system(path: path, call: "open", errno: error)
        }
        defer { close(fd) }
        // The checks run on the opened file, so nothing can swap the path between the check and the read.
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .system(path: path, call: "fstat", errno: errno) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .notRegularFile(path: path) }
        guard info.st_uid == geteuid() else {
            throw .notOwned(path: path, owner: info.st_uid, expected: geteuid())
        }
        guard info.st_mode & 0o077 == 0 else { throw .tooPermissive(path: path, mode: info.st_mode & 0o7777) }
        guard info.st_size == SecretKey.length else { throw .wrongSize(path: path, size: Int(info.st_size)) }

        var failure: KeyFileError?
        let key = SecretKey { target in
            var done = 0
            while done < SecretKey.length {
                let got = read(fd, target + done, SecretKey.length - done)
                if got < 0, errno == EINTR { continue }
                guard got > 0 else {
                    failure = got == 0 ? .wrongSize(path: path, size: done) : .system(path: path, call: "read", errno: errno)
                    return
                }
                done += got
            }
        }
        if let failure { throw failure }
        return key
    }

    /// Writes a new random key to `path`; fails with `link`/`EEXIST` when a file appeared there meanwhile.
    static func create(at path: String) throws(KeyFileError) {
        guard Sodium.isReady else { throw .system(path: path, call: "sodium_init", errno: 0) }
        // Written under a temporary name and linked into place, so a crash never leaves a short key file behind
        // and link(2), unlike rename(2), never replaces a file another daemon put there first.
        let temporary = "\(path).new-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .system(path: temporary, call: "open", errno: errno) }
        defer { unlink(temporary) }
        var key = [UInt8](repeating: 0, count: SecretKey.length)
        randombytes_buf(&key, key.count)
        defer { sodium_memzero(&key, key.count) }
        let written = write(fd, key, key.count)
        let writeError = errno
        let synced = fsync(fd) == 0
        let syncError = errno
        close(fd)
        guard written == key.count else { throw .system(path: temporary, call: "write", errno: writeError) }
        guard synced else { throw .system(path: temporary, call: "fsync", errno: syncError) }
        guard link(temporary, path) == 0 else { throw .system(path: path, call: "link", errno: errno) }
        try syncDirectory(of: path)
    }

    private static func syncDirectory(of path: String) throws(KeyFileError) {
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) }.map { $0.isEmpty ? "/" : $0 } ?? "."
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .system(path: directory, call: "open", errno: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw .system(path: directory, call: "fsync", errno: errno) }
    }
}
