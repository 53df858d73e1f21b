import Glibc

/// Unix time in milliseconds, for what is stored and must survive a restart (created times, rate-limit
/// failures, token idleness). Timers use the loop's monotonic clock instead. Injected, so that windows measured
/// in wall time are tested on a manual clock.
public protocol WallClock: Sendable {
    func nowMs() -> Int64
}

/// The system's real-time clock.
public struct SystemWallClock: WallClock {
    public init() {}

    public func nowMs() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1_000 + Int64(spec.tv_nsec) / 1_000_000
    }
}

/// A wall clock that moves only when a test says so; safe to read from workers.
public final class ManualWallClock: WallClock {
    private let current: Locked<Int64>

    public init(nowMs: Int64 = 1_700_000_000_000) { current = Locked(nowMs) }

    public func nowMs() -> Int64 { current.withLock { $0 } }

    public func advance(byMs milliseconds: Int64) { current.withLock { $0 += milliseconds } }
}
