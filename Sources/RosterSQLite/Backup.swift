import CSQLite
import Glibc
import RosterRuntime
import RosterStorage

extension Database {
    /// The database at `path` as the source of an offline backup: opened read-write, so that SQLite's locking and
    /// WAL recovery work as for any reader beside a running daemon, but never created, checked or switched to
    /// another journal mode (it may not even be Roster's; copying it changes nothing).
    public static func backupSource(path: String) throws(StoreError) -> Database {
        try Database(opening: path, flags: SQLITE_OPEN_READWRITE)
    }

    /// Removes the backup partials that dead processes left beside the database at `path`, and returns their
    /// names. Only for start-up, under the `DatabaseLock`: a partial carrying our own PID is then a dead
    /// predecessor's, since nothing of ours is in flight yet. Backups into other directories clean theirs when
    /// the next backup goes there.
    public static func removeStaleBackupPartials(besideDatabaseAt path: String) -> [String] {
        BackupPartial.removeStale(in: DatabaseFiles(path: path).directory, includingOurPID: true)
    }

    /// Copies this database to `path` with SQLite's online backup API while others keep using it, checks the copy
    /// with `PRAGMA integrity_check`, and only then publishes it under `path`.
    ///
    /// `path` must name nothing yet: an existing file, a device, a directory or any file of the live database is
    /// refused before anything is written (`BackupRefusal`), and the copy is published without ever replacing
    /// what may have appeared there meanwhile. The copy is built in a `BackupPartial` of its own, so concurrent
    /// backups never share a file, and the partial is removed on every failure. The copy is a standalone file in
    /// rollback-journal mode, with no `-wal` or `-shm`, ready to be opened or copied elsewhere.
    public func backup(to path: String) throws(BackupError) -> BackupSummary {
        guard let source = rawHandle else { throw .store(.closed(operation: "backup")) }
        return try Self.publishedCopy(to: path, live: DatabaseFiles(path: self.path)) { destination throws(BackupError) in
            try Self.storing { () throws(StoreError) in try Self.copyPages(from: source, into: destination) }
        }
    }

    /// What every backup shares, whatever fills it: the target checked against `live` (nil when the database is
    /// not a local file), a fresh `BackupPartial` opened without following links and still ours, `fill` writing the
    /// copy into it (no journal: a partial that fails is deleted, so there is nothing to roll back, and no sidecar;
    /// it returns the pages written), the header marked rollback-journal, `PRAGMA integrity_check`, and only then
    /// the partial fsynced and published under `path`, never replacing what may have appeared there meanwhile.
    static func publishedCopy(to path: String, live: DatabaseFiles?,
                              fill: (Database) throws(BackupError) -> Int) throws(BackupError) -> BackupSummary {
        let target = try BackupTarget(path: path, live: live)
        let directoryPath = target.directoryPath
        BackupPartial.removeStale(in: directoryPath, includingOurPID: false)
        let partial = try BackupPartial(for: target)
        let partialPath = directoryPath + "/" + partial.name
        return try withExtendedLifetime(partial) { () throws(BackupError) -> BackupSummary in
            // NOFOLLOW and the identity check: the name must still be the file we created with O_EXCL.
            let destination = try storing { () throws(StoreError) in
                try Database(opening: partialPath, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW)
            }
            defer { destination.close() }
            guard partial.isStillOurs() else { throw .refused(.badDirectory) }
            try storing { () throws(StoreError) in _ = try destination.pragmaValue("PRAGMA journal_mode=OFF") }
            let pages = try fill(destination)
            destination.close()
            try partial.markRollbackJournal()
            try storing { () throws(StoreError) in
                let copy = try Database(opening: partialPath, flags: SQLITE_OPEN_READONLY | SQLITE_OPEN_NOFOLLOW)
                defer { copy.close() }
                guard try copy.pragmaValue("PRAGMA integrity_check") == "ok" else {
                    throw .sqlite(code: SQLITE_CORRUPT, extendedCode: SQLITE_CORRUPT, systemErrno: 0,
                                  operation: "backup integrity check")
                }
            }
            guard partial.isStillOurs() else { throw .refused(.badDirectory) }
            try partial.publish()
            var info = stat()
            let bytes = fstatat(target.directory, target.name, &info, Int32(AT_SYMLINK_NOFOLLOW)) == 0 ? Int64(info.st_size) : 0
            return BackupSummary(path: path, pages: pages, bytes: bytes)
        }
    }

    static func storing<T>(_ body: () throws(StoreError) -> T) throws(BackupError) -> T {
        do throws(StoreError) {
            return try body()
        } catch {
            throw .store(error)
        }
    }

    private static func copyPages(from source: OpaquePointer, into destination: Database) throws(StoreError) -> Int {
        guard let target = destination.rawHandle,
              let backup = sqlite3_backup_init(target, "main", source, "main") else {
            throw .sqlite(code: SQLITE_ERROR, extendedCode: SQLITE_ERROR, systemErrno: 0, operation: "backup start")
        }
        var code: Int32
        var sharing = CoreSharing()
        repeat {
            // Small steps let writers in between; a busy or locked source just means "try again shortly".
            code = sqlite3_backup_step(backup, 256)
            sharing.yieldIfDue()
            if code == SQLITE_BUSY || code == SQLITE_LOCKED { usleep(2_000) }
        } while code == SQLITE_OK || code == SQLITE_BUSY || code == SQLITE_LOCKED
        let pages = Int(sqlite3_backup_pagecount(backup))
        sqlite3_backup_finish(backup)
        guard code == SQLITE_DONE else {
            let errno = sqlite3_system_errno(target)
            throw .sqlite(code: code & 0xff, extendedCode: code, systemErrno: errno, operation: "backup step")
        }
        return pages
    }
}
