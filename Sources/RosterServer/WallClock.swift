import Glibc

/// Unix time in milliseconds, for what is stored and must survive a restart (created times, rate-limit
/// failures, token idleness). Timers use the loop's monotonic clock instead.
enum WallClock {
    static func nowMs() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1_000 + Int64(spec.tv_nsec) / 1_000_000
    }
}
