/// A parameter bound to a statement: text format for text, numbers and booleans, binary for `bytea`, so that no
/// value is ever spliced into SQL.
public enum PGValue: Equatable, Sendable {
    case null
    case text(String)
    case int(Int64)
    case bool(Bool)
    case bytes([UInt8])

    /// `text`, or `null` for nil.
    public static func optional(_ text: String?) -> PGValue { text.map(PGValue.text) ?? .null }
}

/// One statement and its parameters (`$1`, `$2`, …).
public struct PGStatement: Equatable, Sendable {
    public var sql: String
    public var params: [PGValue]

    public init(_ sql: String, _ params: [PGValue] = []) {
        self.sql = sql
        self.params = params
    }
}
