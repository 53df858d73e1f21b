// LoginRateLimit and LoginGate — the sliding-window limits on failed log-ins, sans I/O (protocol.md,
// "Failed log-ins").
//
// RULES
//   Three counts of failures, each a sliding window of `RateLimitIntervalSec`, read from storage (shared by every
//   daemon on PostgreSQL, by the database's clock):
//   • per account (`account:NAME`, burst `RateLimitBurst`): every attempt on that name, known or not, so each
//     person has their own; an unknown name has one too, by the name typed;
//   • per requester, on real accounts (`uid:1000`, `remote:203.0.113.5`; ten accounts' worth): the failures on
//     names that hold an account. Once full it stops every attempt of that requester, on any name, so a peer that
//     sprays real accounts with guesses is held back whatever it types next;
//   • per requester, on unknown names (`unknown:uid:1000`, `unknown:remote:…`; ten accounts' worth): the failures on
//     names nobody holds. Once full it stops that requester's attempts on unknown names only: an enumerator (or
//     a script's typos) limits itself, while the people behind the same uid or address, who type their own
//     name, still log in, wrong passwords counting as ever in the first two.
//   A failure is recorded under its account's key and under exactly one of the requester's two keys.
//
// DOES THE SPLIT TELL WHETHER A NAME EXISTS?
//   Only where the daemon already tells it. With `RevealUnknownUsers=yes` (the seed preset) an unknown name is
//   answered `not_found` and a known one `wrong_password`, and the log-in form's username field says which: a
//   limit that reacts to existence gives nothing away that the answer did not. Under the hardened preset both are
//   `invalid_credentials`, in the same bytes and the same time (the dummy hash), and there the split would be an
//   oracle: once a requester filled its unknown-name count, an unknown name would answer `rate_limited` at once
//   while a real one would still be hashed and refused; or, with its real-account count one short of full, a
//   wrong password on a name would fill it only if the name were real. So under the hardened preset
//   (`revealUnknownUsers` false) every failure counts under the one requester key, as before the split, and a
//   flood of made-up names limits the requester as a whole: where existence is secret, that is the price.
//
// THEORY OF OPERATION
//   `LoginGate.Keys` names the keys of one attempt: `read` (the counts judged) and `all` (the counts it adds to,
//   when it fails, and holds while in flight). `LoginGate.decide` judges each count read against its limit and
//   answers the longest wait of those full.

/// The sliding-window limit on one count of failed log-ins: once `burst` failures fall within `interval`,
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
    /// The rate-limit keys of one attempt: one per person, and the requester's (the peer uid, or the remote a trusted
    /// gateway speaks for) on real accounts, and on unknown names for an unknown one.
    public struct Keys: Equatable, Hashable, Sendable {
        public let account: String
        /// The requester's count of failures on real accounts (every failure, when unknown names are not apart).
        public let peer: String
        /// The requester's count of failures on unknown names, when this attempt's name is one and they are
        /// counted apart; nil otherwise.
        public let unknownPeer: String?

        /// `found` is the canonical username of the account the identifier names, if any. `separatingUnknown`
        /// counts a requester's failures on unknown names apart (only where the answers already tell a name
        /// exists: see the file's header).
        public init(found: String?, identifier: String, requester: Requester, separatingUnknown: Bool) {
            account = LoginRateLimit.accountKey(found: found, identifier: identifier)
            peer = requester.limitKey
            unknownPeer = found == nil && separatingUnknown ? Self.unknownPrefix + requester.limitKey : nil
        }

        static let unknownPrefix = "unknown:"

        /// The keys a failure is recorded under, in that order: the account's, and the requester's one count it
        /// belongs to.
        public var all: [String] { [account, unknownPeer ?? peer] }

        /// The keys whose counts judge the attempt: the account's, the requester's on real accounts (which stops
        /// everything once full), and on unknown names for an unknown one.
        public var read: [String] { unknownPeer.map { [account, peer, $0] } ?? [account, peer] }
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
        let perPeer = LoginRateLimit.perPeer(policy)
        var limits = [(keys.account, LoginRateLimit.perAccount(policy)), (keys.peer, perPeer)]
        if let unknown = keys.unknownPeer { limits.append((unknown, perPeer)) }
        // The longest wait: the attempt goes ahead only once every count it is judged by has room.
        var longest: Int64?
        for (key, limit) in limits {
            let earlier = inFlight[key]?.count { $0 < attempt.sequence } ?? 0
            if case .limited(let wait) = limit.decide(failures: failures[key] ?? [], inFlight: earlier, now: nowMs) {
                longest = max(longest ?? wait, wait)
            }
        }
        return longest.map { .limited(retryAfterMs: $0) } ?? .allowed
    }
}
