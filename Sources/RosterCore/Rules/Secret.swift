/// A password in transit: its text is reachable only through `exposed`, so printing, logging or
/// string-interpolating one by accident shows "<redacted>" instead: a secret is never echoed.
public struct Secret: Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable {
    /// The text itself; the name makes every read of it stand out in review.
    public let exposed: String

    public init(_ exposed: String) { self.exposed = exposed }

    public var isEmpty: Bool { exposed.isEmpty }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
    // `dump` and Testing's failure output walk the mirror, not `description`, so it must be empty too.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
