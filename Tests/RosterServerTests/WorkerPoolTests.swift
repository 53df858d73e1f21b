import CLinux
import Dispatch
import Glibc
import Testing
@testable import RosterServer

@Suite("Worker pool")
struct WorkerPoolTests {
    /// A job that runs longer than the stall limit looks, from outside, like a worker starved by a busy host:
    /// the watchdog must raise it to an ordinary thread, and once the queue is empty it rests at idle again.
    @Test(.enabled(if: ThreadScheduling.workersCanRestAtIdle))
    func aStalledWorkerIsRaisedAndRestsAgainAfterwards() {
        let pool = WorkerPool<Int>(threads: 1, queueLimit: 8, stallLimit: .milliseconds(20)) { 0 }
        let policies = Locked<[Int32]>([])
        let done = DispatchSemaphore(value: 0)
        #expect(pool.submit { _ in
            policies.withLock { $0.append(sched_getscheduler(0)) }
            // Wait (bounded) until the watchdog has raised this thread.
            for _ in 0..<1_000 where sched_getscheduler(0) != 0 { usleep(10_000) }
            policies.withLock { $0.append(sched_getscheduler(0)) }
            done.signal()
        })
        #expect(done.wait(timeout: .now() + 15) == .success)
        // The worker rests right after that job; the next one finds it idle.
        usleep(50_000)
        #expect(pool.submit { _ in policies.withLock { $0.append(sched_getscheduler(0)) }; done.signal() })
        #expect(done.wait(timeout: .now() + 15) == .success)
        #expect(policies.withLock { $0 } == [ROSTER_SCHED_IDLE, 0, ROSTER_SCHED_IDLE])
        #expect(pool.raisedCount == 1)
        pool.stop()
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
