import RosterCore
import Testing

/// The per-requester mail limit on a virtual clock: ten a sliding minute, each requester apart, bounded memory.
@Suite("Mail peer limit")
struct MailPeerLimitTests {
    let t0 = Instant.zero + .seconds(1_000)
    let alice = Requester.uid(1000)

    private func remote(_ literal: String) -> Requester {
        guard let address = RemoteAddress(parsing: literal) else {
            Issue.record("not an address: \(literal)")
            return .uid(0)
        }
        return .remote(address)
    }

    @Test func tenAMinuteThenTheWaitUntilTheOldestLeaves() {
        var limit = MailPeerLimit()
        for second in 0..<10 {
            #expect(limit.admit(alice, now: t0 + .seconds(second)) == .allowed)
        }
        #expect(limit.admit(alice, now: t0 + .seconds(10)) == .limited(retryAfterMs: 50_000))
        #expect(limit.admit(alice, now: t0 + .seconds(60) - .milliseconds(1)) == .limited(retryAfterMs: 1))
        // A refused one does not count: the oldest leaves at 60 s and one more goes.
        #expect(limit.admit(alice, now: t0 + .seconds(60)) == .allowed)
        #expect(limit.admit(alice, now: t0 + .seconds(60)) == .limited(retryAfterMs: 1_000))
        #expect(limit.admit(alice, now: t0 + .seconds(200)) == .allowed)
    }

    /// A gateway's browsers are requesters of their own, by address (an IPv6 /64 as one), as the log-in limits
    /// count them; the gateway's uid is another.
    @Test func eachRequesterIsCountedApartAsTheLogInLimitsCountThem() {
        var limit = MailPeerLimit()
        for _ in 0..<10 { #expect(limit.admit(remote("203.0.113.5"), now: t0) == .allowed) }
        #expect(limit.admit(remote("203.0.113.5"), now: t0) == .limited(retryAfterMs: 60_000))
        #expect(limit.admit(remote("203.0.113.6"), now: t0) == .allowed)
        #expect(limit.admit(.uid(65534), now: t0) == .allowed)
        for _ in 0..<10 { #expect(limit.admit(remote("2001:db8:0:1::1"), now: t0) == .allowed) }
        #expect(limit.admit(remote("2001:db8:0:1:ffff::2"), now: t0) == .limited(retryAfterMs: 60_000))
        #expect(limit.admit(remote("2001:db8:0:2::1"), now: t0) == .allowed)
        #expect(limit.requestersHeld == 5)
    }

    @Test func aSweepForgetsRequestersWithNothingInTheWindow() {
        var limit = MailPeerLimit()
        _ = limit.admit(alice, now: t0)
        _ = limit.admit(.uid(1001), now: t0 + .seconds(30))
        limit.sweep(now: t0 + .seconds(60))
        #expect(limit.requestersHeld == 1)
        limit.sweep(now: t0 + .seconds(90))
        #expect(limit.requestersHeld == 0)
    }

    /// Past `maxRequesters` a new requester shares one overflow count; the table never grows past the bound, and
    /// a requester already counted keeps its own.
    @Test func newRequestersPastTheBoundShareOneCount() {
        var limit = MailPeerLimit()
        for uid in 0..<UInt32(MailPeerLimit.maxRequesters) { #expect(limit.admit(.uid(uid), now: t0) == .allowed) }
        #expect(limit.requestersHeld == MailPeerLimit.maxRequesters)
        for uid in 0..<10 { #expect(limit.admit(.uid(100_000 + UInt32(uid)), now: t0) == .allowed) }
        #expect(limit.admit(.uid(200_000), now: t0) == .limited(retryAfterMs: 60_000))
        #expect(limit.requestersHeld == MailPeerLimit.maxRequesters)
        #expect(limit.admit(.uid(7), now: t0) == .allowed)
        // Once the minute is over, the sweep at the next new requester makes room.
        #expect(limit.admit(.uid(300_000), now: t0 + .seconds(61)) == .allowed)
        #expect(limit.requestersHeld == 1)
    }
}
