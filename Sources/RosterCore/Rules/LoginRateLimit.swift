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

    /// One peer may front many people (a web backend without `remote`, a household behind one address), so it
    /// gets ten accounts' worth of failures.
    public static func perPeer(_ policy: Policy) -> LoginRateLimit {
        LoginRateLimit(burst: policy.rateLimitBurst * 10, interval: policy.rateLimitInterval)
    }

    /// The failure count's key for a log-in by `identifier` (canonical), of the account `found` when there is
    /// one: one key per person, so a name and an email of the same account do not double the guesses. An
    /// unknown identifier longer than any name or email can be is cut short, so that guesses with a 60 KB
    /// name do not store 60 KB rows; such names can never be registered, and sharing a count only stops
    /// their sender sooner.
    public static func accountKey(found: String?, identifier: String) -> String {
        if let found { return "account:" + found }
        guard identifier.utf8.count > maxStoredIdentifierBytes else { return "account:" + identifier }
        return "account:" + String(decoding: identifier.utf8.prefix(maxStoredIdentifierBytes), as: UTF8.self) + "…"
    }

    /// Past any name (256 code points of 4 bytes at the most permissive UsernameMaxLength) and any email.
    static let maxStoredIdentifierBytes = 1_024

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

/// The gate every log-in passes before its password is verified: the account's limit and the peer's, with the
/// attempts still being verified counted as failures. Pure: the recorded failures and `now` are facts the
/// storage hands in (`now` is the backend's clock, the one the failures were recorded by), so the window is
/// tested on numbers, not on sleeps.
///
/// An attempt is counted from the moment its keys are known, before its failures are read, and each attempt
/// counts those that began before it: reads that overlap then see each other, so a flood of parallel guesses
/// cannot all read "below the burst" before the first of them is recorded, while the first ones of a burst
/// still go ahead. When storage answers at once, this is exactly the count of attempts allowed and unfinished.
public struct LoginGate: Equatable, Sendable {
    /// The rate-limit keys of one attempt: one per person, one per requester (the peer uid, or the remote a trusted
    /// gateway speaks for).
    public struct Keys: Equatable, Hashable, Sendable {
        public let account: String
        public let peer: String

        /// `found` is the canonical username of the account the identifier names, if any.
        public init(found: String?, identifier: String, requester: Requester) {
            account = LoginRateLimit.accountKey(found: found, identifier: identifier)
            peer = requester.limitKey
        }

        /// Both keys, in the order failures are recorded.
        public var all: [String] { [account, peer] }
    }

    /// One attempt between `begin` and `end`.
    public struct Attempt: Equatable, Hashable, Sendable {
        public let keys: Keys
        let sequence: UInt64
    }

    /// The attempts in flight under each key, in the order they began.
    private var inFlight: [String: [UInt64]] = [:]
    private var nextSequence: UInt64 = 0

    public init() {}

    /// How long a window of failures the gate reads under `policy`.
    public static func windowMs(_ policy: Policy) -> Int64 { LoginRateLimit.perAccount(policy).intervalMs }

    /// Attempts in flight under `key`.
    public func attemptsInFlight(_ key: String) -> Int { inFlight[key]?.count ?? 0 }

    /// Whether no attempt is in flight at all.
    public var isIdle: Bool { inFlight.isEmpty }

    /// An attempt under `keys` starts; it counts against every attempt that begins after it, until `end`.
    public mutating func begin(_ keys: Keys) -> Attempt {
        let attempt = Attempt(keys: keys, sequence: nextSequence)
        nextSequence += 1
        for key in keys.all { inFlight[key, default: []].append(attempt.sequence) }
        return attempt
    }

    /// The attempt's verdict is known (and recorded, if it was a failure).
    public mutating func end(_ attempt: Attempt) {
        for key in attempt.keys.all {
            inFlight[key]?.removeAll { $0 == attempt.sequence }
            if inFlight[key]?.isEmpty ?? false { inFlight[key] = nil }
        }
    }

    /// The verdict on an attempt that has begun: `failures` are the times the storage read per key, at `nowMs`.
    public func decide(_ attempt: Attempt, failures: [String: [Int64]], nowMs: Int64,
                       policy: Policy) -> LoginRateLimit.Decision {
        let keys = attempt.keys
        for (key, limit) in [(keys.account, LoginRateLimit.perAccount(policy)), (keys.peer, LoginRateLimit.perPeer(policy))] {
            let earlier = inFlight[key]?.count { $0 < attempt.sequence } ?? 0
            if case .limited(let wait) = limit.decide(failures: failures[key] ?? [], inFlight: earlier, now: nowMs) {
                return .limited(retryAfterMs: wait)
            }
        }
        return .allowed
    }
}
