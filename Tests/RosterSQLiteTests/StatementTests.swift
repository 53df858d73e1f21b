import Foundation
import Testing
import CSQLite
@testable import RosterSQLite

@Suite struct StatementTests {
    @Test func bindsAndReadsEveryType() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("a.db"))
        let statement = try db.prepare("SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?")
        try statement.bind(Int64.max, at: 1)
        try statement.bind(-3, at: 2)
        try statement.bind("héllo 🙂\u{0}tail", at: 3)
        try statement.bind("", at: 4)
        try statement.bind([1, 2, 3] as [UInt8], at: 5)
        try statement.bind([] as [UInt8], at: 6)
        try statement.bind(Data([9, 8]), at: 7)
        try statement.bind(nil as String?, at: 8)
        try statement.bind(SQLValue.integer(5), at: 9)
        #expect(try statement.step())
        #expect(statement.columnCount == 9)
        #expect(statement.int64(at: 0) == Int64.max)
        #expect(statement.int(at: 1) == -3)
        #expect(statement.string(at: 2) == "héllo 🙂\u{0}tail")
        #expect(statement.string(at: 3) == "")
        #expect(!statement.isNull(at: 3))
        #expect(statement.blob(at: 4) == [1, 2, 3])
        #expect(statement.blob(at: 5) == [])
        #expect(!statement.isNull(at: 5))
        #expect(statement.value(at: 6) == .blob([9, 8]))
        #expect(statement.isNull(at: 7))
        #expect(statement.string(at: 7) == nil)
        #expect(statement.value(at: 8) == .integer(5))
        #expect(try !statement.step())
    }

    @Test func bindArrayFillsFromOne() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("a.db"))
        let statement = try db.prepare("SELECT ?, ?, ?")
        try statement.bind([.text("a"), .null, .blob([1])])
        #expect(try statement.step())
        #expect(statement.value(at: 0) == .text("a"))
        #expect(statement.value(at: 1) == .null)
        #expect(statement.value(at: 2) == .blob([1]))
    }

    @Test func resetRewindsAndClearsBindings() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("a.db"))
        try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1), (2)")
        let statement = try db.prepare("SELECT x, ? FROM t ORDER BY x")
        try statement.bind("bound", at: 1)
        #expect(try statement.step())
        #expect(statement.int(at: 0) == 1)
        statement.reset()
        #expect(try statement.step())
        #expect(statement.int(at: 0) == 1)
        #expect(statement.isNull(at: 1))
    }

    @Test func outOfRangeIndexThrowsRange() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("a.db"))
        let statement = try db.prepare("SELECT ?")
        #expect(throws: StoreError.self) { try statement.bind(1, at: 2) }
        do {
            try statement.bind(1, at: Int.max)
            Issue.record("bind accepted an absurd index")
        } catch {
            #expect(error.code == SQLITE_RANGE)
        }
    }

    @Test func statementIsFinalizedWhenReleased() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("a.db"))
        let handle = try #require(db.rawHandle)
        #expect(sqlite3_next_stmt(handle, nil) == nil)
        do {
            let statement = try db.prepare("SELECT 1")
            #expect(try statement.step())
            #expect(sqlite3_next_stmt(handle, nil) != nil)
        }
        #expect(sqlite3_next_stmt(handle, nil) == nil)
    }

    @Test func runStepsToCompletionAndIsReusable() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("a.db"))
        try db.execute("CREATE TABLE t(x)")
        let insert = try db.prepare("INSERT INTO t VALUES (?)")
        for value in 1...3 {
            try insert.bind(value, at: 1)
            try insert.run()
        }
        #expect(try db.pragmaValue("SELECT sum(x) FROM t") == "6")
        #expect(insert.sql == "INSERT INTO t VALUES (?)")
    }
}
