import Foundation
import CSQLite
import Glibc
import Synchronization
import Testing
import RosterStorage
@testable import RosterSQLite

/// Issue 12 §1–2: a backup never overwrites anything, never touches the live files, and never leaves a file behind.
@Suite("Backups", .serialized)
struct BackupTests {
    /// A live database with `users` accounts, its -wal and -shm open, as the daemon has it.
    private func liveDatabase(_ directory: TemporaryDirectory, users: Int = 50) throws -> Database {
        let database = try directory.rosterDatabase()
        try addUsers(database, count: users)
        return database
    }

    private func refusal(_ database: Database, _ path: String) -> BackupRefusal? {
        do {
            _ = try database.backup(to: path)
            return nil
        } catch .refused(let refusal) {
            return refusal
        } catch {
            Issue.record("expected a refusal for \(path), got \(error)")
            return nil
        }
    }

    private func entries(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    @Test func everyTargetThatExistsOrIsLiveIsRefusedAndLeftAsItWas() throws {
        let directory = try TemporaryDirectory()
        let database = try liveDatabase(directory)
        let live = directory.path("roster.db")
        let existing = directory.path("existing.db")
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: existing))
        symlink(live, directory.path("link-to-db"))
        symlink(live + "-wal", directory.path("link-to-wal"))
        link(live, directory.path("hardlink-to-db"))
        symlink(directory.path("nowhere"), directory.path("dangling"))
        mkdir(directory.path("subdirectory"), 0o700)
        // The issue's /dev/null without risking the host's: our own node for device 1:3 (root) or a FIFO.
        let device = directory.path("null")
        if getuid() == 0 { mknod(device, S_IFCHR | 0o666, dev_t(1 << 8 | 3)) } else { mkfifo(device, 0o600) }
        let before = entries(directory.url.path)
        let liveBytes = directory.bytes("roster.db")

        let cases: [(String, BackupRefusal)] = [
            (live, .liveDatabase), (live + "-wal", .liveDatabase), (live + "-shm", .liveDatabase),
            // Names SQLite or the daemon may create at any moment count as live even while absent.
            (live + "-journal", .liveDatabase), (live + ".lock", .liveDatabase),
            // The same file by another name, and the live directory reached through another path.
            (directory.path("link-to-db"), .liveDatabase), (directory.path("link-to-wal"), .liveDatabase),
            (directory.path("hardlink-to-db"), .liveDatabase),
            (directory.path("subdirectory/../roster.db-journal"), .liveDatabase),
            (existing, .targetExists), (device, .notARegularFile), (directory.path("dangling"), .notARegularFile),
            (directory.path("subdirectory"), .notARegularFile), (directory.path("missing/backup.db"), .badDirectory),
            (existing + "/backup.db", .badDirectory),
        ]
        for (path, expected) in cases {
            #expect(refusal(database, path) == expected, "\(path)")
        }
        #expect(entries(directory.url.path) == before, "a refused backup created or removed a file")
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "keep me")
        var info = stat()
        #expect(stat(device, &info) == 0 && (info.st_mode & S_IFMT) != S_IFREG)
        #expect(try database.pragmaValue("PRAGMA integrity_check") == "ok")
        #expect(try UserStore(database: database).userCount() == 50)
        // The main file is only ever written by a checkpoint; none ran, so not a byte of it changed.
        #expect(directory.bytes("roster.db") == liveBytes)
    }

    @Test func aBackupIsOneCheckedStandaloneFileWithNothingBesideIt() throws {
        let directory = try TemporaryDirectory()
        let database = try liveDatabase(directory)
        mkdir(directory.path("backups"), 0o700)
        let target = directory.path("backups/copy.db")
        let summary = try database.backup(to: target)
        #expect(summary.path == target)
        #expect(summary.bytes == Int64(directory.bytes("backups/copy.db").count))
        #expect(entries(directory.path("backups")) == ["copy.db"])
        // A rollback-journal file: opening it creates no -wal or -shm.
        let header = directory.bytes("backups/copy.db")
        #expect(Array(header[18...19]) == [1, 1])
        let copy = try Database(opening: target, flags: SQLITE_OPEN_READWRITE)
        #expect(try copy.pragmaValue("PRAGMA journal_mode") == "delete")
        #expect(try UserStore(database: copy).userCount() == 50)
        copy.close()
        #expect(entries(directory.path("backups")) == ["copy.db"])
        var info = stat()
        #expect(stat(target, &info) == 0 && info.st_mode & 0o777 == 0o600)
        // And once it exists, a second backup to it is refused.
        #expect(refusal(database, target) == .targetExists)
    }

    @Test func concurrentBackupsToOnePathPublishOneFileAndLeaveNoPartial() throws {
        let directory = try TemporaryDirectory()
        try liveDatabase(directory, users: 20_000).close()
        let target = directory.path("copy.db")
        let livePath = directory.path("roster.db")
        let published = Atomic<Int>(0)
        let refused = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            do {
                _ = try Database(path: livePath).backup(to: target)
                published.add(1, ordering: .relaxed)
            } catch BackupError.refused(.targetExists) {
                refused.add(1, ordering: .relaxed)
            } catch {
                Issue.record("a concurrent backup failed otherwise: \(error)")
            }
        }
        #expect(published.load(ordering: .relaxed) == 1)
        #expect(refused.load(ordering: .relaxed) == 3)
        #expect(!entries(directory.url.path).contains { $0.hasSuffix(".partial") || $0.hasPrefix("copy.db-") })
        let copy = try Database(opening: target, flags: SQLITE_OPEN_READONLY)
        #expect(try copy.pragmaValue("PRAGMA integrity_check") == "ok")
        #expect(try UserStore(database: copy).userCount() == 20_000)
    }

    @Test func aBackupThatFailsRemovesItsPartial() throws {
        guard getuid() == 0 else {
            print("skipped: mounting a small file system for a full disk needs root")
            return
        }
        let directory = try TemporaryDirectory()
        let database = try liveDatabase(directory, users: 5_000)
        let small = directory.path("small")
        mkdir(small, 0o700)
        guard run(["/bin/mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", small]) == 0 else {
            Issue.record("could not mount a tmpfs as root")
            return
        }
        defer { run(["/bin/umount", small]) }
        do {
            _ = try database.backup(to: small + "/copy.db")
            Issue.record("a backup onto a 64 KiB file system succeeded")
        } catch .store(let error) {
            #expect(error.isFull, "\(error)")
        } catch {
            Issue.record("expected a full disk, got \(error)")
        }
        #expect(entries(small) == [])
    }

    @Test func partialNamesAreOursOnlyWhenExactlyOurPattern() {
        #expect(BackupPartial.ownerPID(of: ".roster-backup.123.00112233445566ff.partial") == 123)
        #expect(BackupPartial.ownerPID(of: ".roster-backup.123.00112233445566ff.partial-journal") == 123)
        #expect(BackupPartial.ownerPID(of: ".roster-backup.123.00112233445566ff.partial-wal") == 123)
        for name in ["copy.db.partial", ".roster-backup.123.0011.partial", ".roster-backup.0123.00112233445566ff.partial",
                     ".roster-backup.-1.00112233445566ff.partial", ".roster-backup.123.00112233445566FF.partial",
                     ".roster-backup.123.00112233445566ff.partial.old", "roster-backup.123.00112233445566ff.partial",
                     ".roster-backup.123.4.00112233445566ff.partial", ".roster-backup..00112233445566ff.partial",
                     ".roster-backup.+123.00112233445566ff.partial", ".roster-backup.123.００１１２２３３４４５５６６ｆｆ.partial"] {
            #expect(BackupPartial.ownerPID(of: name) == nil, "\(name)")
        }
    }

    @Test func onlyPartialsOfDeadProcessesAreRemoved() throws {
        let directory = try TemporaryDirectory()
        let dead = deadPID()
        let hex = "0123456789abcdef"
        let stale = [".roster-backup.\(dead).\(hex).partial", ".roster-backup.\(dead).\(hex).partial-journal"]
        let ours = ".roster-backup.\(getpid()).\(hex).partial"
        let kept = [".roster-backup.1.\(hex).partial", "copy.db.partial", "notes.txt"]
        for name in stale + kept + [ours] {
            try Data("x".utf8).write(to: URL(fileURLWithPath: directory.path(name)))
        }
        mkdir(directory.path(".roster-backup.\(dead).fedcba9876543210.partial"), 0o700)
        symlink("/etc/passwd", directory.path(".roster-backup.\(dead).aaaaaaaaaaaaaaaa.partial"))

        #expect(BackupPartial.removeStale(in: directory.url.path, includingOurPID: false) == stale.sorted())
        #expect(entries(directory.url.path) == (kept + [ours, ".roster-backup.\(dead).fedcba9876543210.partial",
                                                        ".roster-backup.\(dead).aaaaaaaaaaaaaaaa.partial"]).sorted())
        // At start-up nothing of ours is in flight, so a partial with our PID is a predecessor's.
        #expect(BackupPartial.removeStale(in: directory.url.path, includingOurPID: true) == [ours])
        var info = stat()
        #expect(stat("/etc/passwd", &info) == 0)
    }

    /// The PID of a process that has exited and been reaped.
    private func deadPID() -> pid_t {
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
        defer { argv.forEach { free($0) } }
        posix_spawn(&pid, "/bin/true", nil, nil, argv, nil)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        return pid
    }
}

/// Runs a command to completion and returns its exit status.
@discardableResult
func run(_ argv: [String]) -> Int32 {
    var pid: pid_t = 0
    let arguments = argv.map { strdup($0) } + [nil]
    defer { arguments.forEach { free($0) } }
    guard posix_spawn(&pid, argv[0], nil, nil, arguments, nil) == 0 else { return -1 }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    return (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
}
