import Glibc

/// Lets a long job on a worker give its core back every `interval` of work. The storage workers run at the
/// daemon's own priority (standing back made writes slow on a busy host; see `WorkerPool`), and where one shares
/// the loop's core, EEVDF lets it keep the core for its whole slice (~3 ms) while the loop, woken by a request,
/// waits: roster-bench's loop-stall scenario (docs/BENCHMARKS.md) saw a 64 KiB import hold an unrelated
/// connection's p99 at 2.5 ms that way (0.55 ms with this). A yield costs a syscall; at every 0.5 ms of work it
/// is well under 1 % of a job, and with nobody waiting it returns at once.
public struct CoreSharing {
    private let intervalNs: UInt64
    private let clock: () -> UInt64
    private let yield: () -> Void
    private var lastNs: UInt64

    /// `clock` (monotonic ns) and `yield` are the system's unless a test hands in its own.
    public init(interval: Duration = .microseconds(500), clock: @escaping () -> UInt64 = CoreSharing.monotonicNs,
                yield: @escaping () -> Void = { sched_yield() }) {
        intervalNs = UInt64(interval.components.seconds) * 1_000_000_000
            + UInt64(interval.components.attoseconds / 1_000_000_000)
        self.clock = clock
        self.yield = yield
        lastNs = clock()
    }

    /// Yields the core when `interval` has passed since the last yield (or the start).
    public mutating func yieldIfDue() {
        guard clock() &- lastNs >= intervalNs else { return }
        yield()
        lastNs = clock()
    }

    public static func monotonicNs() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }
}
