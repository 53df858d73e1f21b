import CSQLite
import Foundation
import Glibc
import RosterProtocol
import RosterCrypto
import RosterSQLite
import Testing

/// Against the real daemon: backups lose nothing, one daemon per database, and a database that
/// is not Roster's, is damaged or cannot be written is refused at start.
@Suite("Storage safety", .serialized)
struct StorageSafetyTests {
    private static let config = "[Hashing]\nMemoryKiB=8192\nIterations=1\n"

    /// A daemon with one user holding `contacts` contacts, and that user's logged-in connection.
    private func populated(_ directory: TemporaryDirectory? = nil, contacts: Int) throws -> (TestDaemon, TestClient) {
        let daemon = try TestDaemon(directory: directory, config: Self.config)
        let client = try daemon.connect()
        _ = try client.call("users.register", ["username": "keep12", "password": "secret1"])
        _ = try client.call("auth.login", ["username": "keep12", "password": "secret1"])
        // In slices that fit in one request line (64 KiB).
        for start in stride(from: 0, to: contacts, by: 1_500) {
            var csv = "name,phone\n"
            for index in start..<min(contacts, start + 1_500) { csv += "Person \(index),+1 555 \(100_000 + index)\n" }
            let imported = try client.call("contacts.import", ["format": "csv", "data": .string(csv)])
            #expect(imported["result"]?["added"]?.int64Value == Int64(min(contacts, start + 1_500) - start), "\(imported)")
        }
        return (daemon, client)
    }

    /// Stops `daemon` cleanly and starts a new one on the same files.
    private func restart(_ daemon: TestDaemon) throws -> TestDaemon {
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0, "\(daemon.stderr)")
        return try TestDaemon(directory: daemon.directory, config: Self.config)
    }

    private func contactTotal(_ daemon: TestDaemon) throws -> Int64? {
        let client = try daemon.connect()
        _ = try client.call("auth.login", ["username": "keep12", "password": "secret1"])
        return try client.call("contacts.list", ["limit": 1])["result"]?["total"]?.int64Value
    }

    private func entries(_ path: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }

    /// rosterd on `database` as a separate process that is expected to refuse it: its exit status and what it
    /// said. One that serves instead is stopped after a few seconds (status 124) rather than hanging the test.
    private func startOnce(_ database: String, in directory: TemporaryDirectory, asNobody: Bool = false) throws
        -> (status: Int32, stderr: String) {
        let sockets = directory.path + "/sockets"
        mkdir(sockets, 0o777)
        chmod(sockets, 0o777)
        let daemon = [TestDaemon.binary, "--socket", sockets + "/once.sock", "--database", database, "--config", "/dev/null"]
        let user = asNobody ? ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] : []
        let result = try capture(["/usr/bin/timeout", "5"] + user + daemon, in: directory)
        return (result.status, result.stderr)
    }

    // MARK: §1 backups

    @Test func aBackupOntoTheLiveFilesOrAnythingThatExistsIsRefusedAndNothingIsLost() throws {
        var (daemon, client) = try populated(contacts: 300)
        let state = daemon.directory.path + "/state"
        let existing = daemon.directory.path + "/existing.db"
        try writeFile(existing, "mine")
        symlink(daemon.databasePath, daemon.directory.path + "/link.db")
        // The issue's /dev/null without risking the host's: our own node for device 1:3 (root) or a FIFO.
        let device = daemon.directory.path + "/null"
        if getuid() == 0 { mknod(device, S_IFCHR | 0o666, dev_t(1 << 8 | 3)) } else { mkfifo(device, 0o600) }
        let cases: [(String, String)] = [
            (daemon.databasePath, "live_database"), (daemon.databasePath + "-wal", "live_database"),
            (daemon.databasePath + "-shm", "live_database"), (daemon.databasePath + "-journal", "live_database"),
            (daemon.directory.path + "/link.db", "live_database"), (device, "not_a_regular_file"),
            (existing, "target_exists"), (state, "not_a_regular_file"),
            (daemon.directory.path + "/missing/backup.db", "bad_directory"),
        ]
        for (path, reason) in cases {
            let answer = try client.call("admin.backup", ["path": .string(path)])
            #expect(answer["error"]?["data"]?["reason"] == .string(reason), "\(path): \(answer)")
            #expect(answer["error"]?["code"] == -32602)
        }
        var info = stat()
        #expect(stat(device, &info) == 0 && (info.st_mode & S_IFMT) != S_IFREG, "the device became a regular file")
        #expect(try readFile(existing) == "mine")
        #expect(!entries(state).contains { $0.hasSuffix(".partial") })
        daemon = try restart(daemon)
        #expect(try contactTotal(daemon) == 300)
        let check = try Database(path: daemon.databasePath)
        #expect(try check.pragmaValue("PRAGMA integrity_check") == "ok")
    }

    @Test func twoPipelinedBackupsToOnePathKeepTheDaemonAndLeaveOneGoodFile() throws {
        let (daemon, _) = try populated(contacts: 6_000)
        let target = daemon.directory.path + "/copy.db"
        let admin = try daemon.connect()
        let request = { (id: Int) in "{\"id\":\(id),\"method\":\"admin.backup\",\"params\":{\"path\":\"\(target)\"}}\n" }
        try admin.send(request(1) + request(2))
        let answers = [try admin.readLine(), try admin.readLine()]
        let succeeded = answers.filter { $0["result"] != nil }
        let refused = answers.compactMap { $0["error"]?["data"]?["reason"] }
        #expect(succeeded.count == 1, "\(answers)")
        #expect(refused.count == 1 && (refused[0] == "busy" || refused[0] == "target_exists"), "\(answers)")
        #expect(daemon.poll() == nil, "the daemon died: \(daemon.stderr)")
        #expect(try admin.call("session.whoami")["result"] != nil)
        #expect(entries(daemon.directory.path).filter { $0.hasPrefix("copy.db") || $0.hasSuffix(".partial") } == ["copy.db"])
        let copy = try Database.backupSource(path: target)
        #expect(try copy.pragmaValue("PRAGMA integrity_check") == "ok")
        #expect(try copy.pragmaValue("SELECT count(*) FROM contacts") == "6000")
    }

    @Test func aPartialLeftByADeadBackupIsRemovedAtStart() throws {
        let directory = try TemporaryDirectory()
        let state = directory.path + "/state"
        mkdir(state, 0o700)
        let stale = ".roster-backup.\(try deadPID()).0123456789abcdef.partial"
        // PID 1 is alive: a partial that may still be written is not ours to remove.
        let alive = ".roster-backup.1.0123456789abcdef.partial"
        for name in [stale, alive, "other.partial"] { try writeFile(state + "/" + name, "x") }
        let daemon = try TestDaemon(directory: directory, config: Self.config)
        #expect(daemon.waitForLog("removed \(stale)"))
        #expect(entries(state).filter { $0.contains("partial") } == [alive, "other.partial"].sorted())
    }

    @Test func pathsInLogLinesCannotForgeALine() throws {
        let daemon = try TestDaemon(config: Self.config)
        let client = try daemon.connect()
        let path = daemon.directory.path + "/missing\nrosterd: forged line\u{1B}[2J/backup.db"
        #expect(try client.call("admin.backup", ["path": .string(path)])["error"]?["data"]?["reason"] == "bad_directory")
        #expect(daemon.waitForLog("refused: bad_directory"))
        let lines = daemon.stderr.split(separator: "\n")
        #expect(!lines.contains { $0.hasPrefix("rosterd: forged") }, "\(daemon.stderr)")
        #expect(!daemon.stderr.contains("\u{1B}"))
        #expect(daemon.stderr.contains("missing\\nrosterd: forged line\\u{1b}[2J/backup.db"))
    }

    // MARK: §3 one daemon per database

    @Test func aSecondDaemonOnTheSameDatabaseExitsNamingThePIDThatHoldsIt() throws {
        let (daemon, _) = try populated(contacts: 10)
        let second = try startOnce(daemon.databasePath, in: daemon.directory)
        #expect(second.status == 1)
        #expect(second.stderr.contains("PID \(daemon.pid)"), "\(second.stderr)")
        // The same file through a symlinked directory is the same database.
        symlink(daemon.directory.path + "/state", daemon.directory.path + "/alias")
        let aliased = try startOnce(daemon.directory.path + "/alias/roster.db", in: daemon.directory)
        #expect(aliased.status == 1 && aliased.stderr.contains("PID \(daemon.pid)"), "\(aliased.stderr)")
        #expect(try contactTotal(daemon) == 10)
        // Once the holder is gone (however it went), the next daemon starts.
        daemon.signal(SIGKILL)
        _ = daemon.waitForExit()
        let next = try TestDaemon(directory: daemon.directory, config: Self.config)
        #expect(try contactTotal(next) == 10)
    }

    // MARK: §4 the database checked at start

    @Test(arguments: [
        "CREATE TABLE users(id INTEGER PRIMARY KEY, login TEXT NOT NULL, pw BLOB); INSERT INTO users VALUES (1, 'x', x'00');",
        "CREATE TABLE invoices(id INTEGER PRIMARY KEY, total REAL); INSERT INTO invoices VALUES (1, 9.5);",
    ])
    func anotherApplicationsDatabaseIsRefusedAndLeftByteForByte(sql: String) throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/theirs.db"
        var connection: OpaquePointer?
        #expect(sqlite3_open(path, &connection) == SQLITE_OK)
        #expect(sqlite3_exec(connection, sql, nil, nil, nil) == SQLITE_OK)
        sqlite3_close(connection)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let result = try startOnce(path, in: directory)
        #expect(result.status == 1)
        #expect(result.stderr.contains("did not make") && result.stderr.contains("left untouched"), "\(result.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        // Nothing beside it either: no lock, no -wal, no -shm.
        #expect(entries(directory.path).filter { $0.hasPrefix("theirs") } == ["theirs.db"])
    }

    @Test func aDatabaseOfThePreviousVersionIsAdoptedAndServed() throws {
        let directory = try TemporaryDirectory()
        mkdir(directory.path + "/state", 0o700)
        let path = directory.path + "/state/roster.db"
        let old = try Database(path: path)
        try Migrator.migrate(old, migrations: RosterSchema.migrations, now: 1)
        let hash = try PasswordHasher(memoryKiB: 8192, iterations: 1).hash("secret1")
        _ = try UserStore(database: old).insertUser(canonical: "keep12", display: "keep12", email: nil, passwordHash: hash,
                                                     createdAt: 1)
        old.close()
        let daemon = try TestDaemon(directory: directory, config: Self.config)
        #expect(try contactTotal(daemon) == 0)
        #expect(try Database.backupSource(path: path).pragmaValue("PRAGMA application_id") == String(RosterSchema.applicationID))
    }

    @Test func flippedBytesAreRefusedAtStart() throws {
        let (daemon, _) = try populated(contacts: 3_000)
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
        let database = try Database.backupSource(path: daemon.databasePath)
        _ = try database.pragmaValue("PRAGMA wal_checkpoint(TRUNCATE)")
        let pages = Int(try database.pragmaValue("PRAGMA page_count") ?? "0") ?? 0
        database.close()
        #expect(pages > 20)
        // One damaged page in the middle of the contacts, as a bad sector or a stray write leaves it.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: daemon.databasePath))
        try handle.seek(toOffset: UInt64((pages / 2) * 4_096))
        try handle.write(contentsOf: Data(repeating: 0xFF, count: 12))
        try handle.close()
        let result = try startOnce(daemon.databasePath, in: daemon.directory)
        #expect(result.status == 1)
        #expect(result.stderr.contains("quick_check") && result.stderr.contains("restore"), "\(result.stderr)")
    }

    @Test func aDatabaseThatCannotBeWrittenIsRefusedAtStart() throws {
        guard getuid() == 0 else {
            print("skipped: a read-only bind mount and running as another user need root")
            return
        }
        let (daemon, _) = try populated(contacts: 10)
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
        let directory = daemon.directory
        let state = directory.path + "/state"

        // A read-only file system.
        let mounted = directory.path + "/ro"
        mkdir(mounted, 0o700)
        #expect(run(["/bin/mount", "--bind", state, mounted]) == 0)
        #expect(run(["/bin/mount", "-o", "remount,ro,bind", mounted]) == 0)
        let readOnlyMount = try startOnce(mounted + "/roster.db", in: directory)
        run(["/bin/umount", mounted])
        #expect(readOnlyMount.status == 1 && readOnlyMount.stderr.contains("Read-only file system"), "\(readOnlyMount.stderr)")

        // A read-only file, and a read-only directory, for a daemon that is not root (root writes through modes).
        chmod(directory.path, 0o755)
        chown(state, 65534, 65534)
        let files = entries(state).map { state + "/" + $0 }
        for file in files { chown(file, 65534, 65534) }
        chmod(daemon.databasePath, 0o400)
        let readOnlyFile = try startOnce(daemon.databasePath, in: directory, asNobody: true)
        #expect(readOnlyFile.status == 1 && readOnlyFile.stderr.contains("cannot be written"), "\(readOnlyFile.stderr)")
        chmod(daemon.databasePath, 0o600)
        chmod(state, 0o500)
        let readOnlyDirectory = try startOnce(daemon.databasePath, in: directory, asNobody: true)
        #expect(readOnlyDirectory.status == 1 && readOnlyDirectory.stderr.contains("directory"), "\(readOnlyDirectory.stderr)")
        // With the modes back, it is served: the refusals were about the modes alone. The key file goes back to
        // root, who starts this daemon: one owned by another user is refused (KeyFileStartTests), and the nobody
        // daemons above needed it as theirs to reach the database's check.
        chmod(state, 0o700)
        chown(state + "/roster.key", 0, 0)
        let served = try TestDaemon(directory: directory, config: Self.config)
        #expect(try contactTotal(served) == 10)
    }

    /// The PID of a process that has exited and been reaped.
    private func deadPID() throws -> pid_t {
        let pid = try spawn(["/bin/true"], environment: [])
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        return pid
    }
}
