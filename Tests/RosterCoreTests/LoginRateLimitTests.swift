import Testing
@testable import RosterCore

@Suite("Failed log-in rate limit")
struct LoginRateLimitTests {
    let limit = LoginRateLimit(burst: 3, interval: .seconds(300))

    @Test func belowTheBurstIsAllowed() {
        #expect(limit.decide(failures: [], now: 1_000_000) == .allowed)
        #expect(limit.decide(failures: [999_000, 999_500], now: 1_000_000) == .allowed)
    }

    @Test func atTheBurstEveryAttemptWaitsForTheOldestToExpire() {
        let now: Int64 = 1_000_000
        #expect(limit.decide(failures: [now - 100_000, now - 50_000, now - 10_000], now: now)
                == .limited(retryAfterMs: 200_000))
    }

    @Test func aboveTheBurstWaitsUntilTheCountDropsBelowIt() {
        let now: Int64 = 1_000_000
        let failures: [Int64] = [now - 200_000, now - 100_000, now - 50_000, now - 10_000]
        #expect(limit.decide(failures: failures, now: now) == .limited(retryAfterMs: 200_000))
    }

    @Test func afterTheWindowTheRightPasswordWorksAgain() {
        let first: Int64 = 1_000_000
        let failures: [Int64] = [first, first + 1, first + 2]
        #expect(limit.decide(failures: failures, now: first + 299_999) != .allowed)
        #expect(limit.decide(failures: failures, now: first + 300_000) == .allowed)
    }

    @Test func verdictsStillPendingCountTowardTheBurst() {
        #expect(limit.decide(failures: [10], inFlight: 2, now: 20) == .limited(retryAfterMs: 1_000))
        #expect(limit.decide(failures: [10], inFlight: 1, now: 20) == .allowed)
    }

    @Test func thePeerLimitIsTenAccountsWorth() {
        #expect(LoginRateLimit.perPeer(.seed).burst == 100)
        #expect(LoginRateLimit.perAccount(.seed) == LoginRateLimit(burst: 10, interval: .seconds(300)))
    }

    @Test func accountKeysAreBoundedButNeverShareARealAccountsCount() {
        #expect(LoginRateLimit.accountKey(found: "alice1", identifier: "alice@example.com") == "account:alice1")
        #expect(LoginRateLimit.accountKey(found: nil, identifier: "nobody1") == "account:nobody1")
        let huge = String(repeating: "x", count: 60_000)
        #expect(LoginRateLimit.accountKey(found: nil, identifier: huge).utf8.count < 1_100)
        // The longest name the most permissive configuration accepts keeps its own count.
        let longest = String(repeating: "\u{10348}", count: 256)
        #expect(LoginRateLimit.accountKey(found: nil, identifier: longest) == "account:" + longest)
        // A stored account is counted under its own name however long an older daemon let it be.
        #expect(LoginRateLimit.accountKey(found: huge, identifier: huge) == "account:" + huge)
    }
}

@Suite("Log-in gate")
struct LoginGateTests {
    var policy: Policy {
        var policy = Policy.seed
        policy.rateLimitBurst = 2
        policy.rateLimitInterval = .seconds(1)
        return policy
    }

    let keys = LoginGate.Keys(found: "pia123", identifier: "pia@example.com", requester: .uid(1000), separatingUnknown: true)
    /// An unknown name, from the same uid.
    let ghost = LoginGate.Keys(found: nil, identifier: "ghost1", requester: .uid(1000), separatingUnknown: true)

    @Test func keysArePerPersonAndPerPeer() {
        #expect(keys.all == ["account:pia123", "uid:1000"])
        #expect(keys.read == ["account:pia123", "uid:1000"])
        let unknown = LoginGate.Keys(found: nil, identifier: "nobody1", requester: .uid(7), separatingUnknown: true)
        #expect(unknown.all == ["account:nobody1", "unknown:uid:7"])
        #expect(unknown.read == ["account:nobody1", "uid:7", "unknown:uid:7"])
        // Where the answers hide whether a name exists, so do the counts.
        let hidden = LoginGate.Keys(found: nil, identifier: "nobody1", requester: .uid(7), separatingUnknown: false)
        #expect(hidden.all == ["account:nobody1", "uid:7"] && hidden.read == hidden.all)
        let real = LoginGate.Keys(found: "pia123", identifier: "pia123", requester: .uid(7), separatingUnknown: false)
        #expect(real.all == ["account:pia123", "uid:7"] && real.read == real.all)
        #expect(LoginGate.windowMs(policy) == 1_000)
    }

    @Test func aRemoteIsThePeerKeyInsteadOfTheUID() throws {
        let remote = try #require(RemoteAddress(parsing: "2001:db8::1"))
        #expect(LoginGate.Keys(found: "pia123", identifier: "pia123", requester: .remote(remote), separatingUnknown: true).all
                == ["account:pia123", "remote:2001:db8::/64"])
        #expect(LoginGate.Keys(found: nil, identifier: "x", requester: .remote(remote), separatingUnknown: true).all
                == ["account:x", "unknown:remote:2001:db8::/64"])
    }

    /// A full count of failures on unknown names holds back that requester's unknown names only: a real account's
    /// attempt from the same uid goes ahead (its password is then verified), as long as its own counts have room.
    @Test func failuresOnUnknownNamesLimitOnlyUnknownNames() {
        var gate = LoginGate()
        let now: Int64 = 50_000
        let flood = ["unknown:uid:1000": (0..<20).map { now - 100 + Int64($0) }]
        let real = gate.begin(keys)
        #expect(gate.decide(real, failures: flood, nowMs: now, policy: policy) == .allowed)
        gate.end(real)
        let made = gate.begin(ghost)
        #expect(gate.decide(made, failures: flood, nowMs: now, policy: policy) == .limited(retryAfterMs: 900))
        gate.end(made)
        // One short of the burst is not full.
        let fewer = ["unknown:uid:1000": (0..<19).map { now - 100 + Int64($0) }]
        let again = gate.begin(ghost)
        #expect(gate.decide(again, failures: fewer, nowMs: now, policy: policy) == .allowed)
        gate.end(again)
    }

    /// A peer that sprays real accounts fills its count on them, and that stops all it tries, unknown names too.
    @Test func failuresOnRealAccountsLimitEveryName() {
        var gate = LoginGate()
        let now: Int64 = 50_000
        let spray = ["uid:1000": (0..<20).map { now - 100 + Int64($0) }]
        for keys in [keys, ghost] {
            let attempt = gate.begin(keys)
            #expect(gate.decide(attempt, failures: spray, nowMs: now, policy: policy) == .limited(retryAfterMs: 900))
            gate.end(attempt)
        }
    }

    /// Attempts in flight on unknown names count against unknown names, not against the real accounts' count.
    @Test func unknownNamesInFlightDoNotHoldBackARealAccount() {
        var gate = LoginGate()
        let flood = (0..<20).map { _ in gate.begin(ghost) }
        #expect(gate.attemptsInFlight("unknown:uid:1000") == 20)
        #expect(gate.attemptsInFlight("uid:1000") == 0)
        let real = gate.begin(keys)
        #expect(gate.decide(real, failures: [:], nowMs: 10, policy: policy) == .allowed)
        let late = gate.begin(ghost)
        #expect(gate.decide(late, failures: [:], nowMs: 10, policy: policy) == .limited(retryAfterMs: 1_000))
        for attempt in flood + [real, late] { gate.end(attempt) }
        #expect(gate.isIdle)
    }

    /// Every count that is full must empty before the attempt goes ahead: the wait is the longest.
    @Test func theWaitIsTheLongestOfTheCountsThatAreFull() {
        var gate = LoginGate()
        let now: Int64 = 50_000
        let attempt = gate.begin(ghost)
        let failures = ["account:ghost1": [now - 500, now - 400], "unknown:uid:1000": (0..<20).map { now - 100 + Int64($0) }]
        #expect(gate.decide(attempt, failures: failures, nowMs: now, policy: policy) == .limited(retryAfterMs: 900))
        gate.end(attempt)
    }

    /// The window runs on the storage's clock, handed in: a wait of `retry_after_ms` is exactly enough.
    @Test func theWindowMovesWithTheStoragesClockNotWithASleep() {
        var gate = LoginGate()
        let attempt = gate.begin(keys)
        let t0: Int64 = 1_700_000_000_000
        let failures = ["account:pia123": [t0, t0 + 5]]
        guard case .limited(let wait) = gate.decide(attempt, failures: failures, nowMs: t0 + 10, policy: policy) else {
            Issue.record("two failures within the second must limit")
            return
        }
        #expect(wait == 990)
        #expect(gate.decide(attempt, failures: failures, nowMs: t0 + 10 + wait - 1, policy: policy) == .limited(retryAfterMs: 1))
        #expect(gate.decide(attempt, failures: failures, nowMs: t0 + 10 + wait, policy: policy) == .allowed)
    }

    @Test func thePeerKeyHasItsOwnLimit() {
        var gate = LoginGate()
        let attempt = gate.begin(keys)
        let now: Int64 = 50_000
        let peerFailures = ["uid:1000": (0..<20).map { now - 100 + Int64($0) }]
        #expect(gate.decide(attempt, failures: peerFailures, nowMs: now, policy: policy) == .limited(retryAfterMs: 900))
        let fewer = ["uid:1000": (0..<19).map { now - 100 + Int64($0) }]
        #expect(gate.decide(attempt, failures: fewer, nowMs: now, policy: policy) == .allowed)
    }

    /// Attempts whose reads overlap see the ones that began before them, so the first of a burst go ahead
    /// and the rest wait for a verdict, whatever order the reads answer in.
    @Test func attemptsInFlightCountAgainstThoseThatBeganLater() {
        var gate = LoginGate()
        let first = gate.begin(keys)
        let second = gate.begin(keys)
        let third = gate.begin(keys)
        #expect(gate.attemptsInFlight("account:pia123") == 3)
        #expect(gate.decide(third, failures: [:], nowMs: 10, policy: policy) == .limited(retryAfterMs: 1_000))
        #expect(gate.decide(second, failures: [:], nowMs: 10, policy: policy) == .allowed)
        #expect(gate.decide(first, failures: [:], nowMs: 10, policy: policy) == .allowed)
        gate.end(first)
        #expect(gate.decide(third, failures: [:], nowMs: 10, policy: policy) == .allowed)
        gate.end(second)
        gate.end(third)
        #expect(gate.isIdle)
    }
}
