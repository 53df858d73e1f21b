/// A value bound to or read from a statement when the column's type is decided at run time.
public enum SQLValue: Equatable, Sendable {
    case integer(Int64)
    case text(String)
    case blob([UInt8])
    case null
}
