/// One row of a text-format result; bytea columns come as hex text and are decoded by `bytes`.
public struct PGRow: Equatable, Sendable {
    /// Each column's raw text bytes, nil for SQL NULL.
    let cells: [[UInt8]?]

    init(cells: [[UInt8]?]) { self.cells = cells }

    /// The column as text, nil for NULL or a column past the end.
    public func text(_ column: Int) -> String? {
        cell(column).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The column as a 64-bit integer, nil for NULL or text that is not one.
    public func int(_ column: Int) -> Int64? {
        text(column).flatMap { Int64($0) }
    }

    /// The column as a boolean (`t` / `f`), nil for NULL or anything else.
    public func bool(_ column: Int) -> Bool? {
        switch text(column) {
        case "t"?: true
        case "f"?: false
        default: nil
        }
    }

    /// A bytea column (hex output, `\x…`) decoded, nil for NULL or text that is not hex bytea.
    public func bytes(_ column: Int) -> [UInt8]? {
        cell(column).flatMap(PGByteaText.decode)
    }

    /// Whether the column is SQL NULL (or past the end).
    public func isNull(_ column: Int) -> Bool { cell(column) == nil }

    private func cell(_ column: Int) -> [UInt8]? {
        guard cells.indices.contains(column) else { return nil }
        return cells[column]
    }
}

/// What one statement returned: its rows (text format), and how many rows it inserted, updated or deleted.
public struct PGResult: Equatable, Sendable {
    public var rows: [PGRow]
    public var affectedRows: Int

    public init(rows: [PGRow], affectedRows: Int) {
        self.rows = rows
        self.affectedRows = affectedRows
    }
}

/// Why a statement did not give a result.
public enum PGFailure: Error, Equatable, Sendable {
    /// No connection up, or it broke before the answer came.
    case unavailable(retryAfterMs: Int64)
    /// The pool's queue budget refused the work.
    case busy(retryAfterMs: Int64)
    /// The server's error (23505 unique_violation, ...).
    case server(sqlState: String, message: String)
    /// statement_timeout (57014) or no answer within the deadline.
    case timeout

    /// A stable name for logs and tests.
    public var reason: String {
        switch self {
        case .unavailable: "unavailable"
        case .busy: "busy"
        case .server(let sqlState, _): "server_\(sqlState)"
        case .timeout: "timeout"
        }
    }
}

/// bytea's hex output format (`bytea_output = hex`, the default since 9.0).
enum PGByteaText {
    static func decode(_ text: [UInt8]) -> [UInt8]? {
        guard text.count >= 2, text[0] == UInt8(ascii: "\\"), text[1] == UInt8(ascii: "x") else { return nil }
        return Hex.decode(text[2...])
    }
}
