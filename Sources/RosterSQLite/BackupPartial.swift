import CLinux
import CSQLite
import Glibc

/// The file a backup is written into before it is published under its target's name.
///
/// Rules, so that a crash or a second backup never costs a file:
/// - it is created with `O_EXCL | O_NOFOLLOW` (never an existing file, never through a symlink), mode 0600,
///   in the target's own directory (so that publishing is a rename, not a copy);
/// - its name is ours alone: `.roster-backup.<pid>.<16 hex digits>.partial`, so two backups to one path never
///   share a file (two sharing one `-shm` is what crashed the daemon);
/// - it is published with `renameat2(RENAME_NOREPLACE)` (or `link` + `unlink` where the file system has no
///   such rename), so a file that appeared at the target meanwhile is never replaced;
/// - a partial left by a process that died is recognised by its name and its dead PID, and removed by
///   `removeStale(in:includingOurPID:)`; nothing else is ever removed.
final class BackupPartial {
    let name: String
    /// Kept so that its directory stays open as long as this file may need removing from it.
    private let target: BackupTarget
    private var directory: Int32 { target.directory }
    private var descriptor: Int32
    private var published = false

    private static let prefix = ".roster-backup."
    private static let suffix = ".partial"
    /// SQLite's sidecars: a partial never has them (it is written with `journal_mode=OFF`), but if some other
    /// tool opened a stale one and made them, they go with it.
    private static let sidecars = ["", "-journal", "-wal", "-shm"]

    /// Creates a fresh partial file in the target's directory.
    init(for target: BackupTarget) throws(BackupError) {
        let name = "\(Self.prefix)\(getpid()).\(Self.randomHex())\(Self.suffix)"
        let descriptor = openat(target.directory, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOSPC || code == EDQUOT { throw .store(Self.ioFailure(code, "backup create")) }
            throw .refused(.badDirectory)
        }
        self.name = name
        self.target = target
        self.descriptor = descriptor
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
        if !published { unlinkat(directory, name, 0) }
    }

    /// The partial still is the file we created, not another swapped in under its name.
    func isStillOurs() -> Bool {
        guard let ours = FileIdentity(descriptor: descriptor) else { return false }
        var info = stat()
        guard fstatat(directory, name, &info, Int32(AT_SYMLINK_NOFOLLOW)) == 0 else { return false }
        return FileIdentity(info) == ours
    }

    /// Marks the copy as a rollback-journal database: the online backup copies the source's header, which says
    /// WAL, and a file saying WAL grows `-wal` and `-shm` beside it the first time anyone opens it.
    func markRollbackJournal() throws(BackupError) {
        let versions: [UInt8] = [1, 1]
        // Bytes 18 and 19 of the header: the file format write and read versions (1 legacy, 2 WAL).
        let written = versions.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, 2, 18) }
        guard written == 2 else { throw .store(Self.ioFailure(errno, "backup header")) }
    }

    /// Makes the copy durable and publishes it under the target's name, failing with `target_exists` if
    /// anything is there by then.
    func publish() throws(BackupError) {
        guard fsync(descriptor) == 0 else { throw .store(Self.ioFailure(errno, "backup fsync")) }
        let target = self.target.name
        if renameat2(directory, name, directory, target, ROSTER_RENAME_NOREPLACE) != 0 {
            let code = errno
            guard code == EINVAL || code == ENOSYS else { throw Self.publishFailure(code) }
            // No RENAME_NOREPLACE on this file system: link fails on an existing name just as atomically.
            guard linkat(directory, name, directory, target, 0) == 0 else { throw Self.publishFailure(errno) }
            unlinkat(directory, name, 0)
        }
        published = true
        // The new name must survive a power loss too, and it lives in the directory.
        fsync(directory)
    }

    private static func publishFailure(_ code: Int32) -> BackupError {
        code == EEXIST ? .refused(.targetExists) : .store(ioFailure(code, "backup rename"))
    }

    /// A file-system failure in SQLite's terms, so that a full disk reads as `isFull` like any other write's.
    static func ioFailure(_ code: Int32, _ operation: String) -> StoreError {
        .sqlite(code: SQLITE_IOERR, extendedCode: SQLITE_IOERR, systemErrno: code, operation: operation)
    }

    private static func randomHex() -> String {
        let value = UInt64.random(in: UInt64.min...UInt64.max)
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    // MARK: Stale partials

    /// Removes the partials (and their sidecars) that a dead process left in `directoryPath`; returns their names.
    /// A partial whose PID is alive, or that is not named exactly as ours, is left alone. `includingOurPID`: at
    /// start-up nothing of ours is in flight yet, so a partial carrying our PID is a dead predecessor's.
    @discardableResult
    static func removeStale(in directoryPath: String, includingOurPID: Bool) -> [String] {
        guard let stream = opendir(directoryPath) else { return [] }
        defer { closedir(stream) }
        let directory = dirfd(stream)
        var removed: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard let pid = ownerPID(of: name), !isAlive(pid, countingUs: !includingOurPID) else { continue }
            var info = stat()
            // Only plain files: a directory or a symlink by that name is not one we made.
            guard fstatat(directory, name, &info, Int32(AT_SYMLINK_NOFOLLOW)) == 0,
                  (info.st_mode & S_IFMT) == S_IFREG, unlinkat(directory, name, 0) == 0 else { continue }
            removed.append(name)
        }
        return removed.sorted()
    }

    /// The PID in a name of ours, `.roster-backup.<pid>.<16 hex>.partial` with an optional SQLite sidecar suffix.
    static func ownerPID(of name: String) -> pid_t? {
        guard name.hasPrefix(prefix) else { return nil }
        var rest = Substring(name.dropFirst(prefix.count))
        guard let sidecar = sidecars.first(where: { rest.hasSuffix(suffix + $0) }) else { return nil }
        rest = rest.dropLast(suffix.count + sidecar.count)
        let parts = rest.split(separator: ".", omittingEmptySubsequences: false)
        // Bytes, not Characters: Character.isHexDigit would also take full-width digits.
        let lowercaseHex = { (byte: UInt8) in (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte) }
        guard parts.count == 2, let pid = pid_t(parts[0]), pid > 0, String(pid) == parts[0],
              parts[1].utf8.count == 16, parts[1].utf8.allSatisfy(lowercaseHex) else { return nil }
        return pid
    }

    private static func isAlive(_ pid: pid_t, countingUs: Bool) -> Bool {
        if pid == getpid() { return countingUs }
        // EPERM: it exists and belongs to someone else; only ESRCH proves it is gone.
        return kill(pid, 0) == 0 || errno != ESRCH
    }
}
