import CLinux
import Glibc

/// How the loop and the pool's threads share the cores: a keystroke's event should not wait behind a 30 ms
/// Argon2id run.
///
/// Pool workers run under SCHED_IDLE, so the loop preempts them the moment it wakes. Nice 10 was not enough
/// on Linux 6.6+ (EEVDF): a nice-10 worker kept a shared core for its whole slice, and typing waited about 7 ms
/// during issue 8's log-in storm (a shorter slice for the loop did not change that). SCHED_IDLE gets only idle
/// time, so on a host whose cores are all busy it could starve; the pool's reserve thread, at the daemon's own
/// priority, then runs the queued work (see `WorkerPool`).
enum ThreadScheduling {
    static let fallbackNice: Int32 = 10

    /// Called on each worker thread itself (policy is per thread on Linux). Falls back to nice 10 where the
    /// policy is refused.
    static func workerThread() {
        if roster_schedule_idle() != 0 { standBack(to: fallbackNice) }
    }

    /// Lowers the calling thread's priority to `nice`, never raising it (systemd's `Nice=` may already be lower).
    private static func standBack(to nice: Int32) {
        errno = 0
        let current = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        let target = errno == 0 ? max(current, nice) : nice
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, target)
    }
}
