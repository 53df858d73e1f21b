import CLinux
import Dispatch
import Glibc

/// How the loop and the hashing lane's workers share the cores: a keystroke's event should not wait behind a
/// 30 ms Argon2id run, and a log-in must not wait forever on a busy host. Only Argon2id stands back (see
/// `WorkerPool`): the storage lane's durable writes, reads, imports and exports run at the daemon's own priority.
///
/// Hashing workers rest at SCHED_IDLE, so the loop preempts them the moment it wakes. Nice alone was not enough on
/// Linux 6.6+ (EEVDF): a nice-10 worker kept a shared core for its whole slice, and typing waited about 7 ms
/// during roster-bench's log-in storm (docs/BENCHMARKS.md; a shorter slice for the loop did not change that).
/// But SCHED_IDLE gets only what the host leaves over: with two CPU hogs a registration took 28–50× its idle
/// time, most of it waiting to be raised and then running at nice 10 against nice-0 hogs. So the pool raises a
/// worker to an ordinary thread at the daemon's own nice as soon as it is starved (its job got under a tenth of a
/// core for a few milliseconds; see `WorkerPool`), and it returns to idle once the queue is empty. The loop's own work never
/// starves a worker that way (it leaves most of the core), so during a log-in storm the workers keep resting.
/// Going back from SCHED_IDLE to nice 0 needs RLIMIT_NICE of 20 (the system unit sets `LimitNICE=20`) or
/// CAP_SYS_NICE; without it the workers run at nice 10 all the time, as before.
public enum ThreadScheduling {
    /// Where a hashing worker runs when it cannot rest at SCHED_IDLE (a user unit's RLIMIT_NICE).
    public static let workerNice: Int32 = 10

    /// Whether a worker lowered to SCHED_IDLE can be raised again. Raises the soft RLIMIT_NICE to what that
    /// needs when the hard limit allows, then tries it on a short-lived thread: root in a container may lack
    /// CAP_SYS_NICE, and only the kernel knows.
    public static let workersCanRestAtIdle: Bool = {
        var limit = rlimit()
        errno = 0
        let current = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        let needed = rlim_t(20 - (errno == 0 ? current : 0))
        if getrlimit(ROSTER_RLIMIT_NICE, &limit) == 0, limit.rlim_cur < needed, limit.rlim_max >= needed {
            limit.rlim_cur = needed
            _ = setrlimit(ROSTER_RLIMIT_NICE, &limit)
        }
        let answer = Locked(false)
        let done = DispatchSemaphore(value: 0)
        startDetachedThread {
            let raisable = roster_set_policy(0, ROSTER_SCHED_IDLE) == 0 && roster_set_policy(0, 0) == 0
            answer.withLock { $0 = raisable }
            done.signal()
        }
        done.wait()
        return answer.withLock { $0 }
    }()

    /// Called on each hashing worker thread itself: SCHED_IDLE at the daemon's own nice when it can be undone,
    /// nice 10 otherwise.
    public static func standBackWorker(restAtIdle: Bool) {
        if restAtIdle { rest() } else { standBack(to: workerNice) }
    }

    /// The calling thread goes (back) to SCHED_IDLE.
    public static func rest() {
        _ = roster_set_policy(0, ROSTER_SCHED_IDLE)
    }

    /// Thread `tid` runs as an ordinary thread again, at the daemon's own nice.
    public static func raise(_ tid: pid_t) {
        _ = roster_set_policy(tid, 0)
    }

    public static func currentThreadID() -> pid_t {
        roster_gettid()
    }

    /// Lowers the calling thread's priority to `nice`, never raising it (systemd's `Nice=` may already be lower).
    private static func standBack(to nice: Int32) {
        errno = 0
        let current = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        let target = errno == 0 ? max(current, nice) : nice
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, target)
    }
}
