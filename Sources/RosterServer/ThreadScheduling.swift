import CLinux
import Glibc

/// How the loop and the hashing workers share a core: a keystroke's event should not wait behind a 30 ms
/// Argon2id run.
///
/// Workers run at nice 10, which still leaves log-ins about a tenth of a busy core (SCHED_IDLE did better for
/// the loop on a quiet machine, but on a loaded one it starved log-ins for many seconds, which no user accepts).
/// Nice alone is not enough on Linux 6.6+ (EEVDF): a running worker keeps the core until its slice (about 3 ms)
/// is used, whatever its weight, so the loop waited milliseconds on wake-up (issue 8's log-in storm). The loop
/// therefore asks for the shortest slice, which lets it preempt a worker at once; its share of the CPU is
/// unchanged. Both calls are per thread and need no privilege (lowering priority and choosing a slice are free).
enum ThreadScheduling {
    static let workerNice: Int32 = 10
    /// The kernel's minimum slice: 0.1 ms.
    static let loopSliceNanoseconds: UInt64 = 100_000

    /// Called on the loop thread before it runs. Keeps the thread's nice value (systemd's `Nice=` still applies).
    static func loopThread() {
        guard let nice = currentNice() else { return }
        _ = roster_set_fair_scheduling(nice, loopSliceNanoseconds)
    }

    /// Called on each worker thread itself: threads inherit their creator's slice, and workers should have the
    /// default one. Falls back to plain nice where sched_setattr is refused.
    static func workerThread() {
        let nice = max(currentNice() ?? workerNice, workerNice)
        if roster_set_fair_scheduling(nice, 0) != 0 {
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, nice)
        }
    }

    /// getpriority may rightly answer -1, so errno tells a failure apart.
    private static func currentNice() -> Int32? {
        errno = 0
        let nice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        return errno == 0 ? nice : nil
    }
}
