import CLinux
import Dispatch
import Glibc
import Testing
@testable import RosterServer

@Suite("Worker pool")
struct WorkerPoolTests {
    /// A job that runs longer than the stall limit looks, from outside, like a worker starved by a busy host:
    /// the watchdog must raise it to an ordinary thread, and once the queue is empty it rests at idle again.
    /// Policies are read from outside the worker, so a loaded machine that delays it cannot change the answer.
    @Test(.enabled(if: ThreadScheduling.workersCanRestAtIdle))
    func aStalledWorkerIsRaisedAndRestsAgainAfterwards() {
        let pool = WorkerPool<Int>(threads: 1, queueLimit: 8, stallLimit: .milliseconds(20)) { 0 }
        let thread = waitFor { pool.workerThreads.first.flatMap { $0 == 0 ? nil : $0 } }
        guard let thread else {
            Issue.record("the worker never started")
            return
        }
        #expect(waitFor { sched_getscheduler(thread) == ROSTER_SCHED_IDLE ? true : nil } == true)
        let release = DispatchSemaphore(value: 0)
        #expect(pool.submit { _ in release.wait() })
        #expect(waitFor { sched_getscheduler(thread) == 0 ? true : nil } == true)
        #expect(pool.raisedCount == 1)
        release.signal()
        #expect(waitFor { sched_getscheduler(thread) == ROSTER_SCHED_IDLE ? true : nil } == true)
        pool.stop()
    }

    /// Polls `probe` every 10 ms for up to 15 s.
    private func waitFor<T>(_ probe: () -> T?) -> T? {
        for _ in 0..<1_500 {
            if let value = probe() { return value }
            usleep(10_000)
        }
        return nil
    }

    @Test(.enabled(if: ThreadScheduling.workersCanRestAtIdle))
    func aPoolThatKeepsMovingIsNeverRaised() {
        let pool = WorkerPool<Int>(threads: 2, queueLimit: 64, stallLimit: .seconds(30)) { 0 }
        let done = DispatchSemaphore(value: 0)
        for _ in 0..<50 { #expect(pool.submit { context in context += 1; done.signal() }) }
        for _ in 0..<50 { #expect(done.wait(timeout: .now() + 20) == .success) }
        #expect(pool.raisedCount == 0)
        #expect(pool.waitingCount == 0)
        pool.stop()
    }

    @Test func workersKeptAtTheCallersPriorityAreNeverIdle() {
        let pool = WorkerPool<Int>(threads: 1, queueLimit: 8, idleWorkers: false) { 0 }
        let policy = Locked<Int32>(-1)
        let done = DispatchSemaphore(value: 0)
        #expect(pool.submit { _ in policy.withLock { $0 = sched_getscheduler(0) }; done.signal() })
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(policy.withLock { $0 } == 0)
        pool.stop()
    }
}
