import Glibc

/// The monotonic clock, in nanoseconds: the only clock the benchmark reads.
enum Clock {
    static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    static func microseconds(since start: UInt64) -> Double {
        Double(now() &- start) / 1_000
    }
}

/// A failure of the benchmark's own set-up, said in words.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
