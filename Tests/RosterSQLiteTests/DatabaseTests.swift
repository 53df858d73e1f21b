import Foundation
import Testing
import CSQLite
@testable import RosterCrypto
import RosterSQLite

@Suite struct DatabaseTests {
    @Test func durabilityPragmasAreInForce() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("a.db"))
        #expect(try db.pragmaValue("PRAGMA journal_mode") == "wal")
        #expect(try db.pragmaValue("PRAGMA synchronous") == "2") // 2 = FULL
        #expect(try db.pragmaValue("PRAGMA foreign_keys") == "1")
        #expect(try db.pragmaValue("PRAGMA busy_timeout") == "5000")
    }

    @Test func newFileIsPrivateAndSoIsItsWAL() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("a.db"))
        try db.execute("CREATE TABLE t(x)")
        try db.execute("INSERT INTO t VALUES (1)")
        for name in ["a.db", "a.db-wal"] {
            let attributes = try FileManager.default.attributesOfItem(atPath: dir.path(name))
            let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue
            #expect(mode == 0o600, "\(name)")
        }
        db.close()
    }

    @Test func missingParentDirectoryIsAnOpenError() throws {
        let dir = try TemporaryDirectory()
        do {
            _ = try Database(path: dir.path("no/such/dir/a.db"))
            Issue.record("open succeeded")
        } catch {
            #expect(error.code == SQLITE_CANTOPEN)
            #expect(error.description.contains("open"))
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path("no")))
    }

    @Test func notADatabaseIsRefused() throws {
        let dir = try TemporaryDirectory()
        try Data(repeating: 0x5A, count: 8_192).write(to: dir.url.appendingPathComponent("junk.db"))
        do {
            _ = try Database(path: dir.path("junk.db"))
            Issue.record("opened a junk file")
        } catch {
            #expect(error.code == SQLITE_NOTADB)
        }
    }

    @Test func transactionCommitsAndRollsBackOnError() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("a.db"))
        try db.execute("CREATE TABLE t(x INTEGER NOT NULL)")
        let committed = try db.transaction { () throws(StoreError) -> Int in
            try db.execute("INSERT INTO t VALUES (1)")
            return 7
        }
        #expect(committed == 7)
        #expect(!db.isInTransaction)

        #expect(throws: StoreError.self) {
            try db.transaction { () throws(StoreError) in
                try db.execute("INSERT INTO t VALUES (2)")
                try db.execute("INSERT INTO t VALUES (NULL)")
            }
        }
        #expect(!db.isInTransaction)
        #expect(try db.pragmaValue("SELECT group_concat(x) FROM t") == "1")
    }

    @Test func transactionsDoNotNest() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("a.db"))
        #expect(throws: StoreError.self) {
            try db.transaction { () throws(StoreError) in
                try db.transaction { () throws(StoreError) in }
            }
        }
        #expect(!db.isInTransaction)
    }

    @Test func secondWriterTimesOutAsBusy() throws {
        let dir = try TemporaryDirectory()
        let first = try Database(path: dir.path("a.db"))
        let second = try Database(path: dir.path("a.db"), busyTimeoutMs: 0)
        try first.execute("BEGIN IMMEDIATE")
        do {
            try second.execute("BEGIN IMMEDIATE")
            Issue.record("second writer got the lock")
        } catch {
            #expect(error.isBusy)
            #expect(!error.isFull)
        }
        try first.execute("COMMIT")
    }

    @Test func fullDatabaseIsReportedAsFull() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("a.db"))
        try db.execute("CREATE TABLE t(x BLOB)")
        try db.execute("PRAGMA max_page_count = 8")
        let insert = try db.prepare("INSERT INTO t VALUES (?)")
        do {
            for _ in 0..<64 {
                try insert.bind([UInt8](repeating: 0xAB, count: 4096), at: 1)
                try insert.run()
            }
            Issue.record("never filled up")
        } catch {
            #expect(error.isFull)
            #expect(!error.isBusy)
        }
    }

    @Test func prepareRejectsBlankAndMultipleStatements() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("a.db"))
        #expect(throws: StoreError.self) { try db.prepare("  ") }
        #expect(throws: StoreError.self) { try db.prepare("SELECT 1; SELECT 2") }
        #expect(throws: StoreError.self) { try db.prepare("SELEKT 1") }
        _ = try db.prepare("SELECT 1;  \n")
    }

    @Test func cachedStatementIsReusedAndComesBackReset() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("a.db"))
        let first = try db.cached("SELECT ?")
        try first.bind(42, at: 1)
        #expect(try first.step())
        #expect(first.int64(at: 0) == 42)
        let again = try db.cached("SELECT ?")
        #expect(first === again)
        #expect(try again.step())
        #expect(again.isNull(at: 0))
    }

    @Test func closedDatabaseRefusesWork() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("a.db"))
        let kept = try db.prepare("SELECT 1")
        db.close()
        db.close()
        #expect(!db.isOpen)
        #expect(throws: StoreError.closed(operation: "prepare")) { try db.prepare("SELECT 1") }
        #expect(throws: StoreError.closed(operation: "execute")) { try db.execute("SELECT 1") }
        // A statement that outlived close must not dangle: close_v2 keeps the connection's memory
        // until the statement is finalized, so touching and then releasing it is safe.
        _ = try? kept.step()
        kept.reset()
    }

    @Test func foreignKeysAreEnforcedAndCascade() throws {
        let dir = try TemporaryDirectory()
        let db = try dir.rosterDatabase()
        let users = UserStore(database: db)
        let tokens = SessionTokenStore(database: db)
        let hash = [UInt8](repeating: 7, count: 32)
        #expect(throws: StoreError.self) { try tokens.insert(tokenHash: hash, userID: 999, now: 1) }

        let user = try users.insertUser(canonical: "alice1", display: "Alice1", email: nil,
                                        passwordHash: placeholderHash, createdAt: 1)
        try tokens.insert(tokenHash: hash, userID: user.id, now: 1)
        try db.execute("DELETE FROM users")
        #expect(try tokens.count() == 0)
    }
}
