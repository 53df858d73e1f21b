/// Failed log-ins per rate-limit key (an account key, a peer key), counted durably so that a restart does not
/// reset a limit. Times are Unix milliseconds on the backend's clock, which the answer carries as `nowMs`.
public protocol LoginFailureStorage {
    /// The failure times of each key within the last `windowMs`, oldest first, and the clock they were read by.
    func recentFailures(keys: [String], windowMs: Int64, completion: @escaping StorageCompletion<RecentFailures>)

    /// Records one failure for each key, durably, before answering. Never refused by a budget: it follows a
    /// verification that was already paid for, and a limit must not be escaped by flooding the queue. `audit`
    /// (nil when the per-peer cap left it out) commits with the failures.
    func recordFailure(keys: [String], audit: AuditRecord?, completion: @escaping StorageCompletion<Void>)
}

/// Failure times per key, and the backend's "now" they are measured against.
public struct RecentFailures: Equatable, Sendable {
    public var nowMs: Int64
    public var times: [String: [Int64]]

    public init(nowMs: Int64, times: [String: [Int64]]) {
        self.nowMs = nowMs
        self.times = times
    }
}
