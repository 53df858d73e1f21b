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
