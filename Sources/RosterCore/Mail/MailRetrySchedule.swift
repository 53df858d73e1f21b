// MailRetrySchedule — when a mail that was not handed off is tried again, and when it is given up, sans I/O
// (protocol.md §Email).
//
// RULES
//   A hand-off is one run of the mail program, given `handOffTimeout` (30 s) before it counts as failed.
//   After the n-th hand-off of a mail fails (n from 1), it is tried again `firstStepMs` × 2^(n−1) later: 1, 2, 4,
//   8, 16, 32 minutes, then every `maxStepMs` (an hour), so a mail system that is down for a while is not asked
//   every minute, and one that comes back is asked again within the hour.
//   No try is set past the window's end (`windowMs`, 24 h after the mail was queued): the last step is cut to
//   end there, so the last try falls at the window's end; a failure at or after it gives the mail up (`failed`).
//   Times are wall-clock Unix milliseconds, as the outbox stores them across restarts and daemons; a clock that
//   stepped back before the queued time counts as no time passed.

/// The outbox's retry rule: the backoff after each failed hand-off and the window after which a mail is failed.
public struct MailRetrySchedule: Equatable, Sendable {
    /// What to do after a hand-off failed.
    public enum Decision: Equatable, Sendable {
        /// Try again at this Unix millisecond.
        case retry(atMs: Int64)
        /// The window is over: the mail is `failed` and never tried again.
        case giveUp
    }

    /// How long one hand-off may run before it counts as failed (the mail program is killed then).
    public static let handOffTimeout: Duration = .seconds(30)
    /// About a minute, doubling, at most an hour, for a day.
    public static let standard = MailRetrySchedule(firstStepMs: 60_000, maxStepMs: 3_600_000, windowMs: 86_400_000)

    public let firstStepMs: Int64
    public let maxStepMs: Int64
    public let windowMs: Int64

    public init(firstStepMs: Int64, maxStepMs: Int64, windowMs: Int64) {
        self.firstStepMs = max(1, firstStepMs)
        self.maxStepMs = max(self.firstStepMs, maxStepMs)
        self.windowMs = max(0, windowMs)
    }

    /// The wait after the `attempt`-th failed hand-off (from 1): `firstStepMs` doubled `attempt − 1` times, at
    /// most `maxStepMs`.
    public func stepMs(afterAttempt attempt: Int) -> Int64 {
        var step = firstStepMs
        var doublings = max(0, attempt - 1)
        while doublings > 0, step < maxStepMs {
            step *= 2
            doublings -= 1
        }
        return min(step, maxStepMs)
    }

    /// After the `attempt`-th hand-off (from 1) of a mail queued at `queuedAtMs` failed at `nowMs`.
    public func afterFailure(attempt: Int, queuedAtMs: Int64, nowMs: Int64) -> Decision {
        let end = queuedAtMs + windowMs
        guard max(nowMs, queuedAtMs) < end else { return .giveUp }
        return .retry(atMs: min(max(nowMs, queuedAtMs) + stepMs(afterAttempt: attempt), end))
    }
}
