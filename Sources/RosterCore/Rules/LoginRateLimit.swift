/// The sliding-window limit on failed log-ins (contract §5): once `burst` failures fall within `interval`,
/// every attempt is refused until enough of them are older than the interval.
///
/// Times are wall-clock Unix milliseconds, because the count must survive a restart (and a reboot, which
/// resets the monotonic clock). Attempts still being verified count as failures until they are known, so
/// a flood of parallel guesses cannot slip past the limit before the first one is recorded.
public struct LoginRateLimit: Equatable, Sendable {
    /// Whether an attempt may go ahead, or how long until it may.
    public enum Decision: Equatable, Sendable {
        case allowed
        case limited(retryAfterMs: Int64)
    }

    public let burst: Int
    public let intervalMs: Int64

    public init(burst: Int, interval: Duration) {
        self.burst = max(1, burst)
        self.intervalMs = max(1, interval.nanoseconds / 1_000_000)
    }

    /// The limit for one account under `policy`.
    public static func perAccount(_ policy: Policy) -> LoginRateLimit {
        LoginRateLimit(burst: policy.rateLimitBurst, interval: policy.rateLimitInterval)
    }

    /// One peer uid may front many people (a web backend, say), so it gets ten accounts' worth of failures.
    public static func perPeer(_ policy: Policy) -> LoginRateLimit {
        LoginRateLimit(burst: policy.rateLimitBurst * 10, interval: policy.rateLimitInterval)
    }

    /// The earliest failure time that still counts at `now`.
    public func windowStart(now: Int64) -> Int64 { now - intervalMs + 1 }

    /// `failures` are the recorded failure times (any order; older ones are ignored); `inFlight` counts attempts
    /// whose verdict is not known yet.
    public func decide(failures: [Int64], inFlight: Int = 0, now: Int64) -> Decision {
        let start = windowStart(now: now)
        let recent = failures.filter { $0 >= start && $0 <= now }.sorted()
        guard recent.count + inFlight >= burst else { return .allowed }
        guard recent.count >= burst else {
            // Only pending verdicts make up the count; they settle within a hash's time.
            return .limited(retryAfterMs: 1_000)
        }
        // The window must lose enough failures to drop below the burst: the (count - burst + 1)-th oldest.
        let expiring = recent[recent.count - burst]
        return .limited(retryAfterMs: max(1, expiring + intervalMs - now))
    }
}
