import CSQLite
import Foundation
import Glibc
import Testing
@testable import RosterSQLite

/// Issue 12 §3–4: the database is checked before it is used, and only one daemon uses it.
@Suite("Database checks at open", .serialized)
struct DatabaseCheckTests {
    /// Writes a plain SQLite file the way another application would, with `sql`.
    private func foreignFile(_ path: String, _ sql: String) throws {
        let database = try Database(opening: path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        try database.execute(sql)
        database.close()
    }

    private func refusalReason(_ body: () throws(StoreError) -> Void) -> DatabaseRefusal.Reason? {
        do {
            try body()
            return nil
        } catch .refused(let refusal) {
            return refusal.reason
        } catch {
            Issue.record("expected a refusal, got \(error)")
            return nil
        }
    }

    private func entries(_ directory: TemporaryDirectory) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.url.path)) ?? []).sorted()
    }

    @Test(arguments: [
        // The issue's case: a clashing `users` table of another shape (it failed with "SQL logic error").
        ("CREATE TABLE users(id INTEGER PRIMARY KEY, login TEXT, pw BLOB); INSERT INTO users VALUES (1, 'x', x'00');",
         DatabaseRefusal.Reason.unrecognisedSchema),
        // Unrelated tables (they were silently migrated into a Roster database).
        ("CREATE TABLE notes(body TEXT); CREATE INDEX notes_body ON notes(body); INSERT INTO notes VALUES ('hi');",
         .unrecognisedSchema),
        // Roster's tables without Roster's history: shape alone does not make a file ours.
        (RosterSchema.migrations[0].sql, .unrecognisedSchema),
        // Another application's id, even with no tables yet.
        ("PRAGMA application_id=1234;", .foreignApplication),
        ("PRAGMA application_id=1234; CREATE TABLE t(x);", .foreignApplication),
        ("PRAGMA journal_mode=WAL; CREATE TABLE wal_table(x); INSERT INTO wal_table VALUES (1);", .unrecognisedSchema),
    ])
    func anotherApplicationsFileIsRefusedWithoutATrace(sql: String, reason: DatabaseRefusal.Reason) throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("theirs.db")
        try foreignFile(path, sql)
        let before = directory.bytes("theirs.db")
        let files = entries(directory)
        #expect(refusalReason { () throws(StoreError) in try RosterSchema.preflight(path: path) } == reason)
        #expect(refusalReason { () throws(StoreError) in _ = try RosterSchema.open(path: path, now: 1) } == reason)
        #expect(directory.bytes("theirs.db") == before, "the file was modified")
        #expect(entries(directory) == files, "a file was created or removed beside it")
    }

    @Test func aFileThatIsNotSQLiteIsRefused() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("noise.db")
        try Data(repeating: 0x5A, count: 8_192).write(to: URL(fileURLWithPath: path))
        #expect(refusalReason { () throws(StoreError) in _ = try RosterSchema.open(path: path, now: 1) } == .notADatabase)
        #expect(directory.bytes("noise.db") == [UInt8](repeating: 0x5A, count: 8_192))
    }

    @Test func aNewFileAndAnEmptyOneBecomeRosterDatabases() throws {
        let directory = try TemporaryDirectory()
        #expect(FileManager.default.createFile(atPath: directory.path("empty.db"), contents: nil))
        for name in ["new.db", "empty.db"] {
            let database = try RosterSchema.open(path: directory.path(name), now: 1)
            #expect(try database.pragmaValue("PRAGMA application_id") == String(RosterSchema.applicationID))
            #expect(try Migrator.appliedNames(database) == RosterSchema.migrations.map(\.name))
        }
    }

    @Test(arguments: [1, RosterSchema.migrations.count])
    func aDatabaseOfTheVersionBeforeTheIdIsAdoptedWithItsData(appliedMigrations: Int) throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("old.db")
        // What the previous Roster left: its migrations, its rows, and application_id 0.
        let old = try Database(path: path)
        try Migrator.migrate(old, migrations: Array(RosterSchema.migrations.prefix(appliedMigrations)), now: 5)
        _ = try UserStore(database: old).insertUser(canonical: "olduser", display: "olduser", email: nil,
                                                     passwordHash: placeholderHash, createdAt: 5)
        #expect(try old.pragmaValue("PRAGMA application_id") == "0")
        old.close()

        let database = try RosterSchema.open(path: path, now: 9)
        #expect(try database.pragmaValue("PRAGMA application_id") == String(RosterSchema.applicationID))
        #expect(try Migrator.appliedNames(database) == RosterSchema.migrations.map(\.name))
        #expect(try UserStore(database: database).usernameExists("olduser"))
    }

    @Test func aRosterDatabaseWithSomethingAddedIsNotAdopted() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("mixed.db")
        let old = try Database(path: path)
        try Migrator.migrate(old, migrations: RosterSchema.migrations, now: 5)
        try old.execute("CREATE TABLE their_table(x)")
        old.close()
        let before = directory.bytes("mixed.db")
        #expect(refusalReason { () throws(StoreError) in _ = try RosterSchema.open(path: path, now: 9) } == .unrecognisedSchema)
        #expect(directory.bytes("mixed.db") == before)
    }

    @Test func flippedBytesAreRefusedAtOpen() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("roster.db")
        let database = try directory.rosterDatabase()
        try addUsers(database, count: 3_000)
        let pages = Int(try database.pragmaValue("PRAGMA page_count") ?? "0") ?? 0
        try database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        database.close()
        #expect(pages > 8)
        // Damage in every page header past the schema's, as a bad disk or a stray write would leave it.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        for page in 3...pages {
            try handle.seek(toOffset: UInt64((page - 1) * 4_096 + 1))
            try handle.write(contentsOf: Data(repeating: 0xA5, count: 6))
        }
        try handle.close()
        let before = directory.bytes("roster.db")
        #expect(refusalReason { () throws(StoreError) in _ = try RosterSchema.open(path: path, now: 1) } == .corrupt)
        #expect(directory.bytes("roster.db") == before)
    }

    @Test func aReadOnlyFileSystemIsRefusedBeforeServing() throws {
        guard getuid() == 0 else {
            print("skipped: a read-only bind mount needs root")
            return
        }
        let directory = try TemporaryDirectory()
        try directory.rosterDatabase().close()
        let mounted = directory.path("ro")
        mkdir(mounted, 0o700)
        guard run(["/bin/mount", "--bind", directory.url.path, mounted]) == 0 else {
            Issue.record("mount --bind failed as root")
            return
        }
        defer { run(["/bin/umount", mounted]) }
        #expect(run(["/bin/mount", "-o", "remount,ro,bind", mounted]) == 0)
        #expect(refusalReason { () throws(StoreError) in
            _ = try RosterSchema.open(path: mounted + "/roster.db", now: 1)
        } == .notWritable)
    }

    @Test func theLockAdmitsOneHolderAndNamesIt() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("roster.db")
        let first = try DatabaseLock.acquire(databasePath: path)
        #expect(directory.bytes("roster.db.lock") == Array("\(getpid())\n".utf8))
        // flock belongs to an open file, so even this same process is refused a second hold.
        #expect(throws: DatabaseLock.Failure.heldBy(pid: getpid(), lockPath: DatabaseFiles(path: path).lockPath)) {
            try DatabaseLock.acquire(databasePath: path)
        }
        // Through a symlink to the directory too: the lock lives beside the resolved file.
        symlink(directory.url.path, directory.path("alias"))
        #expect(throws: DatabaseLock.Failure.self) { try DatabaseLock.acquire(databasePath: directory.path("alias/roster.db")) }
        first.release()
        let second = try DatabaseLock.acquire(databasePath: path)
        second.release()
        var info = stat()
        #expect(stat(directory.path("roster.db.lock"), &info) == 0 && info.st_mode & 0o777 == 0o600)
    }

    @Test func aSymlinkPlantedAsTheLockIsNotFollowed() throws {
        let directory = try TemporaryDirectory()
        try Data("precious".utf8).write(to: URL(fileURLWithPath: directory.path("precious")))
        symlink(directory.path("precious"), directory.path("roster.db.lock"))
        #expect(throws: DatabaseLock.Failure.self) { try DatabaseLock.acquire(databasePath: directory.path("roster.db")) }
        #expect(directory.bytes("precious") == Array("precious".utf8))
    }
}
