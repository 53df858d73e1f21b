import Foundation
import Testing
import CSQLite
@testable import RosterCrypto
import RosterSQLite

@Suite struct StoreErrorTests {
    @Test func uniqueClashDescriptionHasNoBoundValue() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("a.db"))
        try db.execute("CREATE TABLE t(x TEXT UNIQUE)")
        let insert = try db.prepare("INSERT INTO t VALUES (?)")
        try insert.bind("personal-value-1234", at: 1)
        try insert.run()
        do {
            try insert.bind("personal-value-1234", at: 1)
            try insert.run()
            Issue.record("duplicate accepted")
        } catch {
            #expect(error.isConstraintUnique)
            #expect(error.code == SQLITE_CONSTRAINT)
            #expect(error.extendedCode == SQLITE_CONSTRAINT | (8 << 8))
            #expect(!error.description.contains("personal-value-1234"))
            #expect(!String(reflecting: error).contains("personal-value-1234"))
            #expect(error.description.contains("step"))
        }
    }

    @Test func userClashDescriptionsHaveNoBoundValue() throws {
        let dir = try TemporaryDirectory()
        let users = UserStore(database: try dir.rosterDatabase())
        _ = try users.insertUser(canonical: "carol99", display: "Carol99", email: "carol@example.org",
                                 passwordHash: placeholderHash, createdAt: 1)
        do {
            _ = try users.insertUser(canonical: "dave99", display: "Dave99", email: "CAROL@example.org",
                                     passwordHash: placeholderHash, createdAt: 2)
            Issue.record("duplicate accepted")
        } catch {
            #expect(error == .taken(.email))
            #expect(!error.description.lowercased().contains("carol"))
            #expect(!error.description.contains("dave99"))
        }
    }

    @Test func primaryKeyClashCountsAsUnique() throws {
        let dir = try TemporaryDirectory()
        let db = try dir.rosterDatabase()
        let user = try UserStore(database: db).insertUser(canonical: "erin01", display: "erin01", email: nil,
                                                          passwordHash: placeholderHash, createdAt: 1)
        let tokens = SessionTokenStore(database: db)
        let hash = [UInt8](repeating: 1, count: 32)
        try tokens.insert(tokenHash: hash, userID: user.id, now: 1)
        do {
            try tokens.insert(tokenHash: hash, userID: user.id, now: 2)
            Issue.record("duplicate token accepted")
        } catch {
            #expect(error.isConstraintUnique)
            #expect(error.description.contains("insert session token"))
        }
    }

    @Test func fullnessClassification() {
        let full = StoreError.sqlite(code: SQLITE_FULL, extendedCode: SQLITE_FULL, systemErrno: 0, operation: "step")
        let fsyncNoSpace = StoreError.sqlite(code: SQLITE_IOERR, extendedCode: SQLITE_IOERR | (4 << 8),
                                             systemErrno: ENOSPC, operation: "step")
        let quota = StoreError.sqlite(code: SQLITE_IOERR, extendedCode: SQLITE_IOERR | (3 << 8),
                                      systemErrno: EDQUOT, operation: "step")
        let plainIO = StoreError.sqlite(code: SQLITE_IOERR, extendedCode: SQLITE_IOERR | (3 << 8),
                                        systemErrno: EIO, operation: "step")
        #expect(full.isFull)
        #expect(fsyncNoSpace.isFull)
        #expect(quota.isFull)
        #expect(!plainIO.isFull)
        #expect(!StoreError.walUnavailable.isFull)
        #expect(plainIO.description.contains("errno \(EIO)"))
    }
}
