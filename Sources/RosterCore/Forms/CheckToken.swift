/// Identifies one started check, so a late answer to a superseded one can be recognized and dropped.
public struct CheckToken: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let value: UInt64

    public init(_ value: UInt64) { self.value = value }

    public static func < (lhs: CheckToken, rhs: CheckToken) -> Bool { lhs.value < rhs.value }

    public var description: String { "#\(value)" }
}
