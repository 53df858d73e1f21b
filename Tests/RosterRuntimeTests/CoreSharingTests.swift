import Testing
@testable import RosterRuntime

/// A long job yields its core once per interval of work, on a clock the test moves.
@Suite("Core sharing")
struct CoreSharingTests {
    final class Clock {
        var ns: UInt64 = 1_000
        var yields = 0
    }

    @Test func yieldsOncePerIntervalAndCountsFromTheLastYield() {
        let clock = Clock()
        var sharing = CoreSharing(interval: .microseconds(500), clock: { clock.ns }, yield: { clock.yields += 1 })
        clock.ns += 499_999
        sharing.yieldIfDue()
        #expect(clock.yields == 0)
        clock.ns += 1
        sharing.yieldIfDue()
        sharing.yieldIfDue()
        #expect(clock.yields == 1)
        clock.ns += 499_999
        sharing.yieldIfDue()
        #expect(clock.yields == 1)
        clock.ns += 1_000_000
        sharing.yieldIfDue()
        #expect(clock.yields == 2)
    }
}
