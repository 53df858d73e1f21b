import Foundation
import CSQLite

/// One SQLite connection, set up for Roster's durability rules (WAL, synchronous=FULL, foreign keys).
///
/// Not Sendable: the statement cache and the transaction state are unguarded, so a connection belongs to the
/// thread that opened it (the loop's, or a storage worker's, which opens its own). Open one `Database` per
/// thread that needs one; WAL lets readers go on while another connection writes.
public final class Database {
    private var handle: OpaquePointer?
    private var statementCache: [String: Statement] = [:]
    /// True inside `enclosingTransaction`, whose body's own `transaction` calls join it.
    private var enclosing = false

    /// The file this connection was opened on.
    public let path: String

    // Enough for every hot-path query of the daemon; a flood of ad-hoc SQL must not grow memory.
    private static let statementCacheLimit = 64

    /// Opens (creating if needed) the database file at `path`. Parent directories must exist.
    ///
    /// A new file is created with mode 0600 before SQLite opens it; SQLite gives the -wal and -shm
    /// files the same mode, so password hashes are never world-readable whatever the umask.
    /// `busyTimeoutMs` bounds how long a call waits for another connection's lock.
    public convenience init(path: String, busyTimeoutMs: Int32 = 5_000) throws(StoreError) {
        Self.createPrivately(path)
        try self.init(opening: path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, busyTimeoutMs: busyTimeoutMs)
        do throws(StoreError) {
            let mode = try pragmaValue("PRAGMA journal_mode=WAL")
            guard mode?.lowercased() == "wal" else { throw .walUnavailable }
            try execute("PRAGMA synchronous=FULL")
            try execute("PRAGMA foreign_keys=ON")
        } catch {
            close()
            throw error
        }
    }

    /// Opens `path` with exactly `flags` and none of Roster's settings: for looking at a file before deciding
    /// to use it (read-only), for a scratch `:memory:` database, and for a backup's copy.
    init(opening path: String, flags: Int32, busyTimeoutMs: Int32 = 5_000) throws(StoreError) {
        self.path = path
        var connection: OpaquePointer?
        let code = sqlite3_open_v2(path, &connection, flags | SQLITE_OPEN_FULLMUTEX, nil)
        guard code == SQLITE_OK, let connection else {
            let errno = connection.map { sqlite3_system_errno($0) } ?? 0
            // sqlite3_open_v2 allocates a handle even on failure; it must still be released.
            sqlite3_close_v2(connection)
            throw .sqlite(code: code & 0xff, extendedCode: code, systemErrno: errno, operation: "open")
        }
        handle = connection
        sqlite3_extended_result_codes(connection, 1)
        sqlite3_busy_timeout(connection, busyTimeoutMs)
    }

    /// True when SQLite opened the file read-only although it was asked for read-write (a write-protected file):
    /// it says so only here, and every write would then fail.
    public var isReadOnly: Bool {
        handle.map { sqlite3_db_readonly($0, "main") == 1 } ?? true
    }

    deinit {
        close()
    }

    /// Closes the connection. Statements still referenced elsewhere stay valid until released;
    /// later calls on this `Database` throw `StoreError.closed`.
    public func close() {
        statementCache.removeAll()
        guard let handle else { return }
        // close_v2 defers the real close until outstanding statements are finalized, so a
        // Statement kept by a caller cannot dangle.
        sqlite3_close_v2(handle)
        self.handle = nil
    }

    /// True until `close()`.
    public var isOpen: Bool { handle != nil }

    // MARK: SQL

    /// Runs one or more SQL statements that take no parameters (schema, pragmas).
    public func execute(_ sql: String) throws(StoreError) {
        let connection = try open("execute")
        let code = sqlite3_exec(connection, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw failure(code, "execute") }
    }

    /// Prepares a single statement. SQL left over after the first statement is an error, so a
    /// stray second statement is never silently ignored.
    public func prepare(_ sql: String) throws(StoreError) -> Statement {
        try prepare(sql, flags: 0)
    }

    /// A prepared statement for `sql`, reused across calls, reset and with no bindings.
    /// Meant for hot paths with constant SQL text; callers should `reset()` after reading rows so
    /// an unfinished read does not hold the WAL snapshot open.
    public func cached(_ sql: String) throws(StoreError) -> Statement {
        if let statement = statementCache[sql] {
            statement.reset()
            return statement
        }
        let statement = try prepare(sql, flags: UInt32(SQLITE_PREPARE_PERSISTENT))
        if statementCache.count >= Self.statementCacheLimit {
            statementCache.removeAll()
        }
        statementCache[sql] = statement
        return statement
    }

    /// The rowid of the last successful INSERT on this connection.
    public var lastInsertRowID: Int64 {
        handle.map { sqlite3_last_insert_rowid($0) } ?? 0
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE on this connection.
    public var changes: Int {
        handle.map { Int(sqlite3_changes64($0)) } ?? 0
    }

    /// True while a transaction is open on this connection.
    public var isInTransaction: Bool {
        handle.map { sqlite3_get_autocommit($0) == 0 } ?? false
    }

    /// The first column of the first row of `sql`, as text (for pragmas and diagnostics).
    public func pragmaValue(_ sql: String) throws(StoreError) -> String? {
        let statement = try prepare(sql)
        guard try statement.step() else { return nil }
        return statement.string(at: 0)
    }

    // MARK: Transactions

    /// Runs `body` in a BEGIN IMMEDIATE transaction and commits; any error rolls back and is rethrown.
    ///
    /// IMMEDIATE takes the write lock up front, so reads inside `body` see the state the write will
    /// be applied to (no check-then-insert race with another connection). With synchronous=FULL the
    /// commit is on disk when this returns. Transactions do not nest, except inside `enclosingTransaction`, where
    /// `body` runs as part of the enclosing one (which alone commits or rolls back).
    public func transaction<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        if enclosing { return try body() }
        return try committing(body, failing: { $0 })
    }

    /// A BEGIN IMMEDIATE transaction around `body` that the stores' own `transaction` calls inside it join, so a
    /// store's write and what must commit with it (its audit entry) are one commit: a crash keeps both or neither.
    /// Any error, of whatever type, rolls all of it back and is rethrown.
    public func enclosingTransaction<T>(_ body: () throws -> T) throws -> T {
        try committing({ () throws -> T in
            enclosing = true
            defer { enclosing = false }
            return try body()
        }, failing: { $0 })
    }

    /// `body` between BEGIN IMMEDIATE and COMMIT, rolled back on any error; SQLite's own failures as `failing` says.
    private func committing<T, E: Error>(_ body: () throws(E) -> T, failing: (StoreError) -> E) throws(E) -> T {
        do throws(StoreError) { try execute("BEGIN IMMEDIATE") } catch { throw failing(error) }
        let result: T
        do throws(E) {
            result = try body()
            do throws(StoreError) { try execute("COMMIT") } catch { throw failing(error) }
        } catch {
            rollbackIfOpen()
            throw error
        }
        return result
    }

    private func rollbackIfOpen() {
        // SQLite may already have rolled back on its own (SQLITE_FULL, SQLITE_IOERR); a second
        // ROLLBACK would only fail, so check first. Its own failure is secondary to the one thrown.
        guard let handle, sqlite3_get_autocommit(handle) == 0 else { return }
        sqlite3_exec(handle, "ROLLBACK", nil, nil, nil)
    }

    // MARK: Internals

    /// The raw connection, for tests that inspect SQLite's own bookkeeping.
    var rawHandle: OpaquePointer? { handle }

    private func prepare(_ sql: String, flags: UInt32) throws(StoreError) -> Statement {
        let connection = try open("prepare")
        var statement: OpaquePointer?
        var leftover = false
        let code = sql.withCString { text -> Int32 in
            var tail: UnsafePointer<CChar>?
            let code = sqlite3_prepare_v3(connection, text, -1, flags, &statement, &tail)
            if code == SQLITE_OK, let tail {
                leftover = !Self.isBlank(tail)
            }
            return code
        }
        guard code == SQLITE_OK else {
            sqlite3_finalize(statement)
            throw failure(code, "prepare")
        }
        guard let statement, !leftover else {
            // No statement (blank SQL) or more than one: both are programming errors.
            sqlite3_finalize(statement)
            throw .sqlite(code: SQLITE_MISUSE, extendedCode: SQLITE_MISUSE, systemErrno: 0, operation: "prepare")
        }
        return Statement(handle: statement)
    }

    private static func isBlank(_ tail: UnsafePointer<CChar>) -> Bool {
        var cursor = tail
        while cursor.pointee != 0 {
            switch UInt8(bitPattern: cursor.pointee) {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: ";"):
                cursor += 1
            default:
                return false
            }
        }
        return true
    }

    private func open(_ operation: String) throws(StoreError) -> OpaquePointer {
        guard let handle else { throw .closed(operation: operation) }
        return handle
    }

    private func failure(_ code: Int32, _ operation: String) -> StoreError {
        let errno = handle.map { sqlite3_system_errno($0) } ?? 0
        return .sqlite(code: code & 0xff, extendedCode: code, systemErrno: errno, operation: operation)
    }

    private static func createPrivately(_ path: String) {
        // O_EXCL leaves an existing file (and its mode) alone; any other failure is left for
        // sqlite3_open_v2 to report with its own code.
        let descriptor = Foundation.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if descriptor >= 0 {
            Foundation.close(descriptor)
        }
    }
}
