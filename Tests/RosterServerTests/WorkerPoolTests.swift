import Dispatch
import Testing
@testable import RosterServer

@Suite("Worker pool")
struct WorkerPoolTests {
    /// Idle-priority workers can be starved by a busy host; here the only worker is held by a job that does not
    /// end, which stands still the same way, and the reserve thread must run the next jobs anyway, back to back.
    @Test func theReserveRunsQueuedWorkWhenTheWorkersStandStill() {
        let pool = WorkerPool<Int>(threads: 1, queueLimit: 8, stallLimit: .milliseconds(20), idleWorkers: false) { 0 }
        let release = DispatchSemaphore(value: 0)
        let holding = DispatchSemaphore(value: 0)
        let ran = DispatchSemaphore(value: 0)
        #expect(pool.submit { _ in holding.signal(); release.wait() })
        #expect(holding.wait(timeout: .now() + 10) == .success)
        for _ in 0..<3 { #expect(pool.submit { _ in ran.signal() }) }
        for _ in 0..<3 { #expect(ran.wait(timeout: .now() + 10) == .success) }
        #expect(pool.rescuedCount == 3)
        release.signal()
        pool.stop()
    }

    @Test func aPoolThatKeepsMovingNeverNeedsTheReserve() {
        let pool = WorkerPool<Int>(threads: 2, queueLimit: 64, stallLimit: .seconds(30), idleWorkers: false) { 0 }
        let done = DispatchSemaphore(value: 0)
        for _ in 0..<50 { #expect(pool.submit { context in context += 1; done.signal() }) }
        for _ in 0..<50 { #expect(done.wait(timeout: .now() + 10) == .success) }
        #expect(pool.rescuedCount == 0)
        #expect(pool.waitingCount == 0)
        pool.stop()
    }
}
