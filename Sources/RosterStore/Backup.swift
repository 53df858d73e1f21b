import CSQLite
import Foundation

/// What a finished backup holds, for the admin's answer.
public struct BackupSummary: Equatable, Sendable {
    public let path: String
    public let pages: Int
    public let bytes: Int64
}

extension Database {
    /// Copies this database to `path` with SQLite's online backup API while others keep using it, checks the copy
    /// with `PRAGMA integrity_check`, and only then moves it into place (so `path` is never a half-written file).
    /// The copy is a standalone file in rollback-journal mode, ready to be opened or copied elsewhere.
    public func backup(to path: String) throws(StoreError) -> BackupSummary {
        guard let source = rawHandle else { throw .closed(operation: "backup") }
        let temporary = path + ".partial"
        unlink(temporary)
        let destination = try Database(path: temporary)
        var finished = false
        defer {
            destination.close()
            if !finished { unlink(temporary) }
        }
        guard let target = destination.rawHandle,
              let backup = sqlite3_backup_init(target, "main", source, "main") else {
            throw .sqlite(code: SQLITE_ERROR, extendedCode: SQLITE_ERROR, systemErrno: 0, operation: "backup start")
        }
        var code: Int32
        repeat {
            // Small steps let writers in between; a busy or locked source just means "try again shortly".
            code = sqlite3_backup_step(backup, 256)
            if code == SQLITE_BUSY || code == SQLITE_LOCKED { usleep(2_000) }
        } while code == SQLITE_OK || code == SQLITE_BUSY || code == SQLITE_LOCKED
        let pages = Int(sqlite3_backup_pagecount(backup))
        sqlite3_backup_finish(backup)
        guard code == SQLITE_DONE else {
            throw .sqlite(code: code & 0xff, extendedCode: code, systemErrno: 0, operation: "backup step")
        }
        _ = try destination.pragmaValue("PRAGMA journal_mode=DELETE")
        guard try destination.pragmaValue("PRAGMA integrity_check") == "ok" else {
            throw .sqlite(code: SQLITE_CORRUPT, extendedCode: SQLITE_CORRUPT, systemErrno: 0, operation: "backup integrity check")
        }
        destination.close()
        guard rename(temporary, path) == 0 else {
            throw .sqlite(code: SQLITE_CANTOPEN, extendedCode: SQLITE_CANTOPEN, systemErrno: errno, operation: "backup rename")
        }
        finished = true
        var info = stat()
        let bytes = stat(path, &info) == 0 ? Int64(info.st_size) : 0
        return BackupSummary(path: path, pages: pages, bytes: bytes)
    }
}
