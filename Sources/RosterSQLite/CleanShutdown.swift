import CSQLite
import Glibc

/// The mark a daemon leaves beside its database when it stopped cleanly (`roster.db.clean`), so that the next
/// start may skip `PRAGMA quick_check`, which reads and decodes every page (about 0.4 s at a million users).
///
/// Rules. The mark is written only after every connection closed, with no WAL left beside the file, and holds
/// the file's device, inode, size, modification and status-change times as stat(2) gave them then. A start
/// trusts it only when the file still has exactly those (any write to the file, even one that put its
/// modification time back, moves the status-change time) and no WAL is there; and it removes the mark, durably
/// (the directory is synced), before the database is opened for writing. So a daemon that dies after its start,
/// however it dies, leaves no mark, and the start after it runs the full check.
enum CleanShutdown {
    static let version = "roster-clean-shutdown 1"

    /// What the mark holds for the file at `path`, or nil when it cannot be read.
    static func stamp(of path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return "\(version) \(info.st_dev) \(info.st_ino) \(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec) "
            + "\(info.st_ctim.tv_sec).\(info.st_ctim.tv_nsec)\n"
    }

    /// Whether the mark was there and the database is exactly as it was left. The mark is gone, durably, when
    /// this returns (whatever it returns), or the start fails here.
    static func take(_ files: DatabaseFiles) throws(StoreError) -> Bool {
        let markPath = files.cleanMarkPath
        guard let mark = read(markPath) else { return false }
        let left = stamp(of: files.path)
        let walLeft = size(of: files.path + "-wal") > 0
        guard unlink(markPath) == 0 else { throw .sqlite(code: SQLITE_IOERR, extendedCode: SQLITE_IOERR, systemErrno: errno, operation: "remove \(markPath)") }
        try syncDirectory(files.directory)
        return !walLeft && left != nil && left == mark
    }

    /// Leaves the mark for the database whose connections are all closed: false (and no mark) when a WAL
    /// remains or the mark cannot be written durably.
    static func record(_ files: DatabaseFiles) -> Bool {
        guard size(of: files.path + "-wal") <= 0, let mark = stamp(of: files.path) else { return false }
        let temporary = files.cleanMarkPath + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        let bytes = Array(mark.utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == bytes.count, synced, rename(temporary, files.cleanMarkPath) == 0 else {
            unlink(temporary)
            return false
        }
        return (try? syncDirectory(files.directory)) != nil
    }

    private static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return "" }
        return String(decoding: buffer.prefix(count), as: UTF8.self)
    }

    private static func size(of path: String) -> Int64 {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : -1
    }

    private static func syncDirectory(_ directory: String) throws(StoreError) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .sqlite(code: SQLITE_IOERR, extendedCode: SQLITE_IOERR, systemErrno: errno, operation: "open \(directory)") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw .sqlite(code: SQLITE_IOERR, extendedCode: SQLITE_IOERR, systemErrno: errno, operation: "sync \(directory)") }
    }
}
