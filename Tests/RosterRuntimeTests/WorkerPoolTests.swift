import CLinux
import Dispatch
import Glibc
import RosterCore
import RosterTestSupport
import Testing
@testable import RosterRuntime

@Suite("Worker pool")
struct WorkerPoolTests {
    private static let roomy = QueueBudget(jobs: 64, jobsPerPayer: 64, jobsPerConnection: 64, bytes: 1 << 20,
                                           bytesPerPayer: 1 << 20)
    private static let alice = QueueCharge(payer: .account(1), connection: 1)
    private static let bob = QueueCharge(payer: .account(2), connection: 2)

    /// A job that runs longer than the stall limit looks, from outside, like a worker starved by a busy host:
    /// the watchdog must raise it to an ordinary thread, and once the queue is empty it rests at idle again.
    /// Policies are read from outside the worker, so a loaded machine that delays it cannot change the answer.
    @Test(.enabled(if: ThreadScheduling.workersCanRestAtIdle))
    func aStalledWorkerIsRaisedAndRestsAgainAfterwards() {
        let pool = WorkerPool<Int>(threads: 1, budget: Self.roomy, priority: .standBack,
                                   stallLimit: .milliseconds(20)) { 0 }
        guard let thread = Self.threads(of: pool).first else { return }
        #expect(poll { sched_getscheduler(thread) == ROSTER_SCHED_IDLE ? true : nil } == true)
        let release = DispatchSemaphore(value: 0)
        #expect(pool.submit(Self.alice) { _ in release.wait() } == nil)
        #expect(poll { sched_getscheduler(thread) == 0 ? true : nil } == true)
        #expect(pool.raisedCount == 1)
        release.signal()
        #expect(poll { sched_getscheduler(thread) == ROSTER_SCHED_IDLE ? true : nil } == true)
        pool.stop()
    }

    /// The setting chosen against two CPU hogs (a registration took 28–50× its idle time): a hash whose thread
    /// gets next to no CPU is raised within a few milliseconds, not after the stall limit, to an ordinary thread
    /// at the daemon's own nice (not nice 10, which a nice-0 hog leaves a tenth of a core); resting, it keeps
    /// that nice at SCHED_IDLE. A job blocked on a semaphore gets no CPU, as a starved one: the limit here is a
    /// minute, so only starvation can raise it within the wait.
    @Test(.enabled(if: ThreadScheduling.workersCanRestAtIdle))
    func aStarvedWorkerIsRaisedAtOnceToTheDaemonsOwnNice() {
        let pool = WorkerPool<Int>(threads: 1, budget: Self.roomy, priority: .standBack, stallLimit: .seconds(60)) { 0 }
        defer { pool.stop() }
        guard let thread = Self.threads(of: pool).first else { return }
        errno = 0
        let ownNice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        #expect(poll { sched_getscheduler(thread) == ROSTER_SCHED_IDLE ? true : nil } == true)
        #expect(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(thread)) == ownNice)
        let release = DispatchSemaphore(value: 0)
        #expect(pool.submit(Self.alice) { _ in release.wait() } == nil)
        #expect(poll { sched_getscheduler(thread) == 0 ? true : nil } == true, "raised within 15 s, the limit is 60 s")
        #expect(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(thread)) == ownNice, "raised to the daemon's nice")
        #expect(pool.starvedWindow == .milliseconds(4) && WorkerPool<Int>.starvedShare == 0.1)
        release.signal()
        #expect(poll { sched_getscheduler(thread) == ROSTER_SCHED_IDLE ? true : nil } == true)
    }

    /// Starvation is left out (a window of 30 s): on a machine busy with other tests, idle workers are starved,
    /// and raising them is then right.
    @Test(.enabled(if: ThreadScheduling.workersCanRestAtIdle))
    func aPoolThatKeepsMovingIsNeverRaised() {
        let pool = WorkerPool<Int>(threads: 2, budget: Self.roomy, priority: .standBack,
                                   stallLimit: .seconds(30), starvedWindow: .seconds(30)) { 0 }
        let done = DispatchSemaphore(value: 0)
        for _ in 0..<50 { #expect(pool.submit(Self.alice) { context in context += 1; done.signal() } == nil) }
        for _ in 0..<50 { #expect(done.wait(timeout: .now() + 20) == .success) }
        #expect(pool.raisedCount == 0)
        #expect(pool.waitingCount == 0)
        pool.stop()
    }

    /// The budgets each lane takes from the settings: imports' bytes only on storage, and on hashing no user or
    /// connection may hold more than half the queue, so one uid's registrations always leave room for others.
    @Test func eachLaneTakesItsBudgetsFromTheSettings() {
        let settings = ServerSettings(hashQueueLimit: 64, maxQueuedJobs: 500, maxQueuedJobsPerUser: 40,
                                      maxQueuedJobsPerConnection: 20, maxQueuedImportBytes: 9_000,
                                      maxQueuedImportBytesPerUser: 3_000)
        #expect(settings.hashingBudget == QueueBudget(jobs: 64, jobsPerPayer: 32, jobsPerConnection: 20, bytes: .max,
                                                      bytesPerPayer: .max))
        #expect(settings.storageBudget == QueueBudget(jobs: 500, jobsPerPayer: 40, jobsPerConnection: 20, bytes: 9_000,
                                                      bytesPerPayer: 3_000))
        #expect(ServerSettings(hashQueueLimit: 1).hashingBudget.jobsPerPayer == 1)
    }

    /// `contacts.add` then `contacts.remove` pipelined must not swap, and must not hold up another user.
    @Test func oneOrdersJobsRunInTurnWhileAnotherPayerPasses() {
        let pool = WorkerPool<Int>(threads: 2, budget: Self.roomy, priority: .normal) { 0 }
        let order = QueueOrder.contacts(userID: 1)
        let ran = Locked<[String]>([])
        let release = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        #expect(pool.submit(Self.alice, order: order) { _ in release.wait(); ran.withLock { $0.append("add") }; done.signal() } == nil)
        #expect(pool.submit(Self.alice, order: order) { _ in ran.withLock { $0.append("remove") }; done.signal() } == nil)
        #expect(pool.submit(Self.bob) { _ in ran.withLock { $0.append("bob") }; done.signal() } == nil)
        // Bob's job runs on the second worker while "add" holds the first; "remove" waits for "add".
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(ran.withLock { $0 } == ["bob"])
        release.signal()
        for _ in 0..<2 { #expect(done.wait(timeout: .now() + 10) == .success) }
        #expect(ran.withLock { $0 } == ["bob", "add", "remove"])
        pool.stop()
    }

    @Test func aSpentBudgetIsRefusedAtOnceWithARetryHint() {
        let budget = QueueBudget(jobs: 64, jobsPerPayer: 2, jobsPerConnection: 64, bytes: 1 << 20, bytesPerPayer: 1 << 20)
        let pool = WorkerPool<Int>(threads: 1, budget: budget, priority: .normal) { 0 }
        let release = DispatchSemaphore(value: 0)
        #expect(pool.submit(Self.alice) { _ in release.wait() } == nil)
        #expect(pool.submit(Self.alice) { _ in release.wait() } == nil)
        let refusal = pool.submit(Self.alice) { _ in Issue.record("a refused job ran") }
        #expect(refusal?.scope == .payer)
        if let refusal { #expect(pool.retryAfterMs(for: refusal) >= 10) }
        #expect(pool.submit(Self.bob) { _ in } == nil)
        #expect(pool.stats.refused == 1)
        release.signal()
        release.signal()
        pool.stop()
    }

    @Test func workersAtNormalPriorityAreNeverIdle() {
        let pool = WorkerPool<Int>(threads: 1, budget: Self.roomy, priority: .normal) { 0 }
        let policy = Locked<Int32>(-1)
        let done = DispatchSemaphore(value: 0)
        #expect(pool.submit(Self.alice) { _ in policy.withLock { $0 = sched_getscheduler(0) }; done.signal() } == nil)
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(policy.withLock { $0 } == 0)
        pool.stop()
    }

    /// The pool's kernel thread ids, once every worker has started.
    private static func threads<Context>(of pool: WorkerPool<Context>) -> [pid_t] {
        if let threads = poll({ pool.workerThreads.contains(0) ? nil : pool.workerThreads }) { return threads }
        Issue.record("the workers never started")
        return []
    }
}
