import CLinux
import Dispatch
import Glibc
import RosterCore
import RosterTestSupport
import Testing
@testable import RosterRuntime
@testable import RosterServer

@Suite("Password lanes")
struct PasswordLanesTests {
    /// Issue 12: with every worker at SCHED_IDLE, two CPU hogs made a `contacts.add` take 233 ms. Only the hashing
    /// lane stands back; libpwquality, whose verdict a keystroke waits for, keeps the daemon's own policy and nice,
    /// idle or busy. (The storage backend's own lane is the backend's to test.)
    @Test func onlyTheHashingLaneStandsBack() throws {
        let loop = try EventLoop(signals: [])
        let lanes = PasswordLanes(settings: ServerSettings(hashWorkers: 1), cores: 2, policy: .seed, loop: loop,
                                  logger: Logger(level: .emerg))
        defer {
            lanes.hashing.stop()
            lanes.checks.stop()
        }
        let checks = Self.threads(of: lanes.checks)
        #expect(checks.count == 1)
        errno = 0
        let ownNice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        let release = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let alice = QueueCharge(payer: .account(1), connection: 1)
        #expect(lanes.checks.submit(alice) { _ in started.signal(); release.wait() } == nil)
        #expect(started.wait(timeout: .now() + 10) == .success)
        for thread in checks {
            #expect(sched_getscheduler(thread) == 0, "a checks worker is not SCHED_OTHER")
            #expect(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(thread)) == ownNice)
        }
        release.signal()
        if ThreadScheduling.workersCanRestAtIdle, let hashing = Self.threads(of: lanes.hashing).first {
            #expect(poll { sched_getscheduler(hashing) == ROSTER_SCHED_IDLE ? true : nil } == true)
        }
    }

    /// The pool's kernel thread ids, once every worker has started.
    private static func threads<Context>(of pool: WorkerPool<Context>) -> [pid_t] {
        if let threads = poll({ pool.workerThreads.contains(0) ? nil : pool.workerThreads }) { return threads }
        Issue.record("the workers never started")
        return []
    }
}
