import CLibPQ
import Glibc

/// The libpq calls both the blocking and the loop-driven connection make the same way: parameters bound
/// (bytea in binary, the rest as text), and results read into Swift values.
enum LibPQ {
    /// `bytea`'s type oid: a binary parameter must name its type.
    private static let byteaOID: Oid = 17

    /// Calls `body` with libpq's parameter arrays for `params`, which live only during the call.
    static func withParameters<R>(_ params: [PGValue],
                                  _ body: (Int32, UnsafePointer<Oid>?, UnsafePointer<UnsafePointer<CChar>?>?,
                                           UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> R) -> R {
        var types: [Oid] = []
        var values: [UnsafeMutablePointer<CChar>?] = []
        var lengths: [Int32] = []
        var formats: [Int32] = []
        for param in params {
            switch param {
            case .null:
                types.append(0); values.append(nil); lengths.append(0); formats.append(0)
            case .text(let text):
                types.append(0); values.append(strdup(text)); lengths.append(0); formats.append(0)
            case .int(let number):
                types.append(0); values.append(strdup(String(number))); lengths.append(0); formats.append(0)
            case .bool(let flag):
                types.append(0); values.append(strdup(flag ? "t" : "f")); lengths.append(0); formats.append(0)
            case .bytes(let bytes):
                // malloc(0) may answer nil, which libpq would read as NULL: keep at least one byte.
                let buffer = malloc(max(1, bytes.count))?.assumingMemoryBound(to: CChar.self)
                if let buffer { bytes.withUnsafeBytes { raw in if let base = raw.baseAddress { _ = memcpy(buffer, base, bytes.count) } } }
                types.append(byteaOID); values.append(buffer); lengths.append(Int32(bytes.count)); formats.append(1)
            }
        }
        defer { for value in values { free(value) } }
        let constValues = values.map { UnsafePointer($0) }
        return types.withUnsafeBufferPointer { types in
            constValues.withUnsafeBufferPointer { values in
                lengths.withUnsafeBufferPointer { lengths in
                    formats.withUnsafeBufferPointer { formats in
                        body(Int32(params.count), types.baseAddress, values.baseAddress, lengths.baseAddress, formats.baseAddress)
                    }
                }
            }
        }
    }

    /// One result of a statement, read and cleared: rows, or the server's failure.
    enum Outcome {
        case done(PGResult)
        case failed(PGFailure)
        /// Skipped because an earlier statement of the same pipeline segment failed.
        case aborted
        /// The end of a pipeline segment (`PQpipelineSync`).
        case sync
    }

    /// Reads `result` into Swift values and clears it.
    static func outcome(of result: OpaquePointer) -> Outcome {
        defer { PQclear(result) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return .done(PGResult(rows: rows(of: result), affectedRows: Int(String(cString: PQcmdTuples(result))) ?? 0))
        case PGRES_PIPELINE_SYNC:
            return .sync
        case PGRES_PIPELINE_ABORTED:
            return .aborted
        default:
            return .failed(failure(of: result))
        }
    }

    private static func rows(of result: OpaquePointer) -> [PGRow] {
        let rowCount = PQntuples(result)
        let columnCount = PQnfields(result)
        guard rowCount > 0 else { return [] }
        var rows: [PGRow] = []
        rows.reserveCapacity(Int(rowCount))
        for row in 0..<rowCount {
            var cells: [[UInt8]?] = []
            cells.reserveCapacity(Int(columnCount))
            for column in 0..<columnCount {
                if PQgetisnull(result, row, column) != 0 {
                    cells.append(nil)
                } else if let value = PQgetvalue(result, row, column) {
                    let length = Int(PQgetlength(result, row, column))
                    cells.append(value.withMemoryRebound(to: UInt8.self, capacity: length) {
                        Array(UnsafeBufferPointer(start: $0, count: length))
                    })
                } else {
                    cells.append([])
                }
            }
            rows.append(PGRow(cells: cells))
        }
        return rows
    }

    /// The server's SQLSTATE and primary message; a cancelled statement (statement_timeout) is `.timeout`.
    static func failure(of result: OpaquePointer) -> PGFailure {
        let sqlState = field(result, "C") ?? ""
        if sqlState == "57014" { return .timeout }
        let message = field(result, "M") ?? String(cString: PQresultErrorMessage(result))
        // A result without an SQLSTATE is libpq's own (the connection failed while it waited).
        guard !sqlState.isEmpty else { return .unavailable(retryAfterMs: 100) }
        return .server(sqlState: sqlState, message: message)
    }

    private static func field(_ result: OpaquePointer, _ code: Unicode.Scalar) -> String? {
        guard let value = PQresultErrorField(result, Int32(code.value)) else { return nil }
        return String(cString: value)
    }

    /// The connection's last error, on one line.
    static func errorMessage(_ connection: OpaquePointer?) -> String {
        guard let connection, let message = PQerrorMessage(connection) else { return "no connection" }
        return String(cString: message).split(whereSeparator: \.isNewline).joined(separator: " ")
    }

    /// A notice receiver that drops notices: libpq's default prints them on stderr, and a ROLLBACK outside a
    /// transaction (after a lease) raises one on purpose.
    static func silenceNotices(_ connection: OpaquePointer) {
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
    }

    /// Calls `body` with a NULL-terminated array of C strings that live only during the call.
    static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
        let copies = strings.map { strdup($0) }
        defer { for copy in copies { free(copy) } }
        let pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } } + [nil]
        return body(pointers)
    }
}
