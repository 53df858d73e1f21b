import RosterCore
import RosterRuntime
import Testing
@testable import RosterServer

/// The output budget of all connections together, and the memory trim after a flood, on a manual clock.
@Suite("The server's output budget")
struct ServerOutputTests {
    let clock = ManualScheduler()
    let trims = Locked(0)
    let output: ServerOutput

    init() {
        var settings = ServerSettings()
        settings.outputBudgetBytes = 1_000
        settings.outputBudgetPerUIDBytes = 600
        let trims = self.trims
        output = ServerOutput(scheduler: clock, settings: settings, trim: { trims.withLock { $0 += 1 } })
    }

    @Test func isSpentInTotalOrForOnePeerUID() {
        output.queuedChanged(uid: 1000, by: 599)
        #expect(!output.isSpent(uid: 1000))
        output.queuedChanged(uid: 1000, by: 1)
        #expect(output.isSpent(uid: 1000) && !output.isSpent(uid: 1001))
        output.queuedChanged(uid: 1001, by: 400)
        #expect(output.isSpent(uid: 1001) && output.isSpent(uid: 0), "the total is everyone's")
        output.queuedChanged(uid: 1000, by: -600)
        #expect(!output.isSpent(uid: 1000) && !output.isSpent(uid: 1001))
        #expect(output.budget.total == 400 && output.budget.queued(uid: 1000) == 0)
    }

    @Test func aReloadsLimitsCountFromTheNextQuestion() {
        output.queuedChanged(uid: 1000, by: 300)
        var settings = ServerSettings()
        settings.outputBudgetBytes = 1_000
        settings.outputBudgetPerUIDBytes = 300
        output.apply(settings)
        #expect(output.isSpent(uid: 1000))
    }

    @Test func aFloodThatDrainedTrimsOnceAndNoMoreThanOncePerInterval() {
        output.queuedChanged(uid: 1000, by: MemoryTrimPolicy.highWater + 1)
        output.queuedChanged(uid: 1000, by: -(MemoryTrimPolicy.highWater + 1))
        #expect(trims.withLock { $0 } == 0, "the trim runs from the loop, not inside the write")
        clock.advance(by: .zero)
        #expect(trims.withLock { $0 } == 1)
        // A second flood right after: its trim waits for the interval.
        output.queuedChanged(uid: 1000, by: MemoryTrimPolicy.highWater + 1)
        output.queuedChanged(uid: 1000, by: -(MemoryTrimPolicy.highWater + 1))
        clock.advance(by: MemoryTrimPolicy.interval - .milliseconds(1))
        #expect(trims.withLock { $0 } == 1)
        clock.advance(by: .milliseconds(1))
        #expect(trims.withLock { $0 } == 2)
        // Output that never climbed past the high water mark trims nothing.
        output.queuedChanged(uid: 1000, by: 500)
        output.queuedChanged(uid: 1000, by: -500)
        clock.advance(by: .seconds(5))
        #expect(trims.withLock { $0 } == 2)
    }
}
