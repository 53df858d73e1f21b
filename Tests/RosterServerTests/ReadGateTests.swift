import RosterCore
import Testing
@testable import RosterRuntime
@testable import RosterServer

@Suite("Back-pressure on reading")
struct ReadGateTests {
    private let limits = ReadGate.Limits(pauseBytes: 1_000, resumeBytes: 250, maxInFlight: 4)

    private func replay(_ facts: [(bytes: Int, inFlight: Int, overBudget: Bool)]) -> [ReadGate.Change?] {
        var gate = ReadGate()
        return facts.map { fact in gate.update(outputBytes: fact.bytes, inFlight: fact.inFlight, overBudget: { fact.overBudget },
                                               limits: limits) }
    }

    @Test func outputAbovePauseStopsReadingUntilItDrainsToResume() {
        #expect(replay([(1_000, 0, false), (1_001, 0, false), (2_000, 0, false), (900, 0, false), (251, 0, false),
                        (250, 0, false), (900, 0, false), (1_001, 0, false)])
                == [nil, .pause, nil, nil, nil, .resume, nil, .pause])
    }

    @Test func requestsInFlightCountToo() {
        #expect(replay([(0, 3, false), (0, 4, false), (0, 4, false), (0, 3, false), (0, 4, false)])
                == [nil, .pause, nil, .resume, .pause])
        // Both must hold to resume: few requests but much output stays paused.
        #expect(replay([(0, 4, false), (500, 0, false), (250, 0, false)]) == [.pause, nil, .resume])
    }

    /// A spent budget stops the connections that hold output (above the resume mark), not those that hold little.
    @Test func aSpentBudgetLowersThePauseMarkToTheResumeMark() {
        #expect(replay([(250, 0, true), (251, 0, true)]) == [nil, .pause])
        #expect(replay([(251, 0, false), (251, 0, true), (250, 0, true)]) == [nil, .pause, .resume])
    }

    @Test func theBudgetIsAskedOnlyWhenItCanMatter() {
        var gate = ReadGate()
        var asked = 0
        _ = gate.update(outputBytes: 250, inFlight: 0, overBudget: { asked += 1; return true }, limits: limits)
        #expect(asked == 0)
        _ = gate.update(outputBytes: 251, inFlight: 0, overBudget: { asked += 1; return false }, limits: limits)
        #expect(asked == 1)
    }
}

@Suite("Output budget")
struct OutputBudgetTests {
    @Test func countsInTotalAndPerUID() {
        var budget = OutputBudget()
        budget.adjust(uid: 1000, by: 600)
        budget.adjust(uid: 1001, by: 300)
        #expect(budget.total == 900)
        #expect(budget.isSpent(uid: 1000, totalLimit: 10_000, perUIDLimit: 600))
        #expect(!budget.isSpent(uid: 1001, totalLimit: 10_000, perUIDLimit: 600))
        #expect(budget.isSpent(uid: 1001, totalLimit: 900, perUIDLimit: 600))
        budget.adjust(uid: 1000, by: -600)
        #expect(budget.queued(uid: 1000) == 0)
        #expect(budget.total == 300)
        #expect(!budget.isSpent(uid: 1000, totalLimit: 10_000, perUIDLimit: 600))
    }
}

@Suite("Returning memory after a burst")
struct MemoryTrimPolicyTests {
    private let high = MemoryTrimPolicy.highWater
    private let low = MemoryTrimPolicy.lowWater

    @Test func aTrimFollowsABurstOnceItHasDrained() {
        var policy = MemoryTrimPolicy()
        let start = Instant.zero + .seconds(10)
        #expect(policy.outputChanged(total: low - 1, now: start) == nil)
        #expect(policy.outputChanged(total: high, now: start) == nil)
        #expect(policy.outputChanged(total: high + 1, now: start) == nil)
        #expect(policy.outputChanged(total: low + 1, now: start) == nil)
        #expect(policy.outputChanged(total: low, now: start + .milliseconds(5)) == start + .milliseconds(5))
        // Nothing more until the next burst.
        #expect(policy.outputChanged(total: 0, now: start + .seconds(3)) == nil)
    }

    @Test func trimsAreAtMostOnePerInterval() {
        var policy = MemoryTrimPolicy()
        let start = Instant.zero + .seconds(10)
        _ = policy.outputChanged(total: high + 1, now: start)
        #expect(policy.outputChanged(total: 0, now: start) == start)
        _ = policy.outputChanged(total: high + 1, now: start + .milliseconds(100))
        let interval = MemoryTrimPolicy.interval
        #expect(policy.outputChanged(total: 0, now: start + .milliseconds(200)) == start + interval)
        _ = policy.outputChanged(total: high + 1, now: start + .seconds(5))
        #expect(policy.outputChanged(total: 0, now: start + .seconds(5)) == start + .seconds(5))
    }
}
