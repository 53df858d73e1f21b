import CLinux
import Dispatch
import Glibc

/// How the loop and the hashing lane's workers share the cores: a keystroke's event should not wait behind a
/// 30 ms Argon2id run, and a log-in must not wait forever on a busy host. Only Argon2id stands back (issue 12):
/// the storage lane's durable writes, reads, imports and exports run at the daemon's own priority.
///
/// Hashing workers rest at SCHED_IDLE, so the loop preempts them the moment it wakes. Nice alone was not enough on
/// Linux 6.6+ (EEVDF): a nice-10 worker kept a shared core for its whole slice, and typing waited about 7 ms
/// during issue 8's log-in storm (a shorter slice for the loop did not change that). But SCHED_IDLE gets only
/// what the host leaves over, so the pool raises its workers to SCHED_OTHER at nice 10 whenever work stands
/// still (see `WorkerPool`), and they return to idle once the queue is empty. Going back from SCHED_IDLE
/// needs RLIMIT_NICE of 10 or more (the system unit sets `LimitNICE=10`) or CAP_SYS_NICE; without it the
/// workers simply run at nice 10 all the time, as before.
public enum ThreadScheduling {
    public static let workerNice: Int32 = 10

    /// Whether a worker lowered to SCHED_IDLE can be raised again. Raises the soft RLIMIT_NICE to what that
    /// needs when the hard limit allows, then tries it on a short-lived thread: root in a container may lack
    /// CAP_SYS_NICE, and only the kernel knows.
    public static let workersCanRestAtIdle: Bool = {
        var limit = rlimit()
        let needed = rlim_t(20 - workerNice)
        if getrlimit(ROSTER_RLIMIT_NICE, &limit) == 0, limit.rlim_cur < needed, limit.rlim_max >= needed {
            limit.rlim_cur = needed
            _ = setrlimit(ROSTER_RLIMIT_NICE, &limit)
        }
        let answer = Locked(false)
        let done = DispatchSemaphore(value: 0)
        startDetachedThread {
            standBack(to: workerNice)
            let raisable = roster_set_policy(0, ROSTER_SCHED_IDLE) == 0 && roster_set_policy(0, 0) == 0
            answer.withLock { $0 = raisable }
            done.signal()
        }
        done.wait()
        return answer.withLock { $0 }
    }()

    /// Called on each hashing worker thread itself: nice 10, then SCHED_IDLE when it can be undone.
    public static func standBackWorker(restAtIdle: Bool) {
        standBack(to: workerNice)
        if restAtIdle { rest() }
    }

    /// The calling thread goes (back) to SCHED_IDLE.
    public static func rest() {
        _ = roster_set_policy(0, ROSTER_SCHED_IDLE)
    }

    /// Thread `tid` runs as an ordinary thread again (its nice stays 10).
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
