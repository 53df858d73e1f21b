/// A point on the daemon's monotonic clock. Core never reads a clock: the loop hands these in.
public struct Instant: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Nanoseconds since an arbitrary, fixed origin (CLOCK_MONOTONIC in the daemon, zero in tests).
    public var nanoseconds: Int64

    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    /// The origin of a manual clock.
    public static let zero = Instant(nanoseconds: 0)

    public static func milliseconds(_ ms: Int64) -> Instant { Instant(nanoseconds: ms * 1_000_000) }

    public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    public static func + (lhs: Instant, rhs: Duration) -> Instant {
        Instant(nanoseconds: lhs.nanoseconds &+ rhs.nanoseconds)
    }

    public static func - (lhs: Instant, rhs: Duration) -> Instant {
        Instant(nanoseconds: lhs.nanoseconds &- rhs.nanoseconds)
    }

    public static func - (lhs: Instant, rhs: Instant) -> Duration {
        .nanoseconds(lhs.nanoseconds &- rhs.nanoseconds)
    }

    public var description: String { "\(Double(nanoseconds) / 1_000_000)ms" }
}

extension Duration {
    /// The whole duration in nanoseconds, saturating far beyond any timer we set.
    public var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (wide, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return wide &+ attoseconds / 1_000_000_000
    }

    /// The whole duration in milliseconds, rounded up so that a wait is never reported shorter than it is.
    public var millisecondsRoundedUp: Int64 {
        let ns = nanoseconds
        return ns <= 0 ? 0 : (ns + 999_999) / 1_000_000
    }
}
