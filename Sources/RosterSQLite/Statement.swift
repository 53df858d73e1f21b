import Foundation
import CSQLite

/// One prepared SQLite statement; finalized when the last reference goes away.
///
/// Not Sendable: it belongs to the thread that is using its `Database`.
public final class Statement {
    private let handle: OpaquePointer

    // SQLITE_TRANSIENT is a function-pointer macro the importer drops; -1 tells SQLite to copy
    // the bytes before the bind call returns, so Swift buffers may be temporary.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init(handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// The SQL text this statement was prepared from (with `?` placeholders, never bound values).
    public var sql: String {
        sqlite3_sql(handle).map { String(cString: $0) } ?? ""
    }

    // MARK: Binding (1-based indexes)

    /// Binds an integer at the 1-based `index`.
    public func bind(_ value: Int64, at index: Int) throws(StoreError) {
        try check(sqlite3_bind_int64(handle, Self.position(index), value), "bind")
    }

    /// Binds an integer at the 1-based `index`.
    public func bind(_ value: Int, at index: Int) throws(StoreError) {
        try bind(Int64(value), at: index)
    }

    /// Binds UTF-8 text at the 1-based `index`; embedded NULs are kept.
    public func bind(_ value: String, at index: Int) throws(StoreError) {
        var text = value
        let code = text.withUTF8 { buffer -> Int32 in
            // An empty buffer may have a nil base address, which SQLite would bind as NULL.
            guard let base = buffer.baseAddress, buffer.count > 0 else {
                return sqlite3_bind_text(handle, Self.position(index), "", 0, Self.transient)
            }
            return base.withMemoryRebound(to: CChar.self, capacity: buffer.count) { chars in
                sqlite3_bind_text64(handle, Self.position(index), chars, sqlite3_uint64(buffer.count),
                                    Self.transient, UInt8(SQLITE_UTF8))
            }
        }
        try check(code, "bind")
    }

    /// Binds a blob at the 1-based `index`; an empty array binds an empty blob, not NULL.
    public func bind(_ value: [UInt8], at index: Int) throws(StoreError) {
        let code = value.withUnsafeBytes { buffer -> Int32 in
            guard let base = buffer.baseAddress, buffer.count > 0 else {
                return sqlite3_bind_zeroblob(handle, Self.position(index), 0)
            }
            return sqlite3_bind_blob64(handle, Self.position(index), base, sqlite3_uint64(buffer.count),
                                       Self.transient)
        }
        try check(code, "bind")
    }

    /// Binds a blob at the 1-based `index`.
    public func bind(_ value: Data, at index: Int) throws(StoreError) {
        try bind([UInt8](value), at: index)
    }

    /// Binds text, or NULL when `value` is nil.
    public func bind(_ value: String?, at index: Int) throws(StoreError) {
        if let value { try bind(value, at: index) } else { try bindNull(at: index) }
    }

    /// Binds an integer, or NULL when `value` is nil.
    public func bind(_ value: Int64?, at index: Int) throws(StoreError) {
        if let value { try bind(value, at: index) } else { try bindNull(at: index) }
    }

    /// Binds NULL at the 1-based `index`.
    public func bindNull(at index: Int) throws(StoreError) {
        try check(sqlite3_bind_null(handle, Self.position(index)), "bind")
    }

    /// Binds a dynamically typed value at the 1-based `index`.
    public func bind(_ value: SQLValue, at index: Int) throws(StoreError) {
        switch value {
        case let .integer(number): try bind(number, at: index)
        case let .text(text): try bind(text, at: index)
        case let .blob(bytes): try bind(bytes, at: index)
        case .null: try bindNull(at: index)
        }
    }

    /// Binds `values` to parameters 1, 2, 3, …
    public func bind(_ values: [SQLValue]) throws(StoreError) {
        for (offset, value) in values.enumerated() {
            try bind(value, at: offset + 1)
        }
    }

    // MARK: Stepping

    /// Advances the statement; true when a row is available to read.
    @discardableResult
    public func step() throws(StoreError) -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw failure(code, "step")
        }
    }

    /// Steps until done, discarding rows, then resets so the statement can be reused.
    public func run() throws(StoreError) {
        defer { reset() }
        while try step() {}
    }

    /// Resets the statement to its start and clears every binding, ending any read it held open.
    public func reset() {
        // sqlite3_reset repeats the last step's error, which was already thrown from step().
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    // MARK: Columns (0-based indexes)

    /// The number of columns in a result row.
    public var columnCount: Int { Int(sqlite3_column_count(handle)) }

    /// True when column `index` of the current row is NULL.
    public func isNull(at index: Int) -> Bool {
        sqlite3_column_type(handle, Int32(clamping: index)) == SQLITE_NULL
    }

    /// Column `index` of the current row as an integer (0 for NULL).
    public func int64(at index: Int) -> Int64 {
        sqlite3_column_int64(handle, Int32(clamping: index))
    }

    /// Column `index` of the current row as an Int (0 for NULL).
    public func int(at index: Int) -> Int {
        Int(truncatingIfNeeded: int64(at: index))
    }

    /// Column `index` of the current row as text, or nil for NULL.
    public func string(at index: Int) -> String? {
        let column = Int32(clamping: index)
        guard let text = sqlite3_column_text(handle, column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// Column `index` of the current row as bytes (empty for NULL or an empty blob).
    public func blob(at index: Int) -> [UInt8] {
        let column = Int32(clamping: index)
        guard let bytes = sqlite3_column_blob(handle, column) else { return [] }
        let count = Int(sqlite3_column_bytes(handle, column))
        return [UInt8](UnsafeRawBufferPointer(start: bytes, count: count))
    }

    /// Column `index` of the current row with its stored type.
    public func value(at index: Int) -> SQLValue {
        switch sqlite3_column_type(handle, Int32(clamping: index)) {
        case SQLITE_INTEGER: return .integer(int64(at: index))
        case SQLITE_NULL: return .null
        case SQLITE_BLOB: return .blob(blob(at: index))
        default: return .text(string(at: index) ?? "")
        }
    }

    // MARK: Errors

    private static func position(_ index: Int) -> Int32 {
        // Out-of-range indexes become 0, which SQLite rejects with SQLITE_RANGE instead of trapping here.
        Int32(exactly: index) ?? 0
    }

    private func check(_ code: Int32, _ operation: String) throws(StoreError) {
        guard code == SQLITE_OK else { throw failure(code, operation) }
    }

    private func failure(_ code: Int32, _ operation: String) -> StoreError {
        if code & 0xff == SQLITE_TOOBIG { return .valueTooLarge(operation: operation) }
        let db = sqlite3_db_handle(handle)
        let extended = db.map { sqlite3_extended_errcode($0) } ?? code
        // The connection's extended code belongs to its last failing call; trust it only when it
        // refines the code we actually got.
        let refined = (extended & 0xff) == (code & 0xff) ? extended : code
        let errno = db.map { sqlite3_system_errno($0) } ?? 0
        return .sqlite(code: code & 0xff, extendedCode: refined, systemErrno: errno, operation: operation)
    }
}
