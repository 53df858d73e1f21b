import Dispatch
import RosterCore
import Glibc

/// A fixed set of threads for work that must not run on the loop (Argon2id, libpwquality, durable writes),
/// with a bounded queue: when it is full, `submit` refuses at once so the caller can answer `busy`.
///
/// Workers rest at idle priority (see `ThreadScheduling`). A watchdog thread, asleep while nothing is queued,
/// raises them to nice 10 when jobs wait and no worker has started or finished one for `stallLimit`, or when
/// a job has run that long: on a host whose cores are all busy, idle-priority threads get almost no time,
/// and a log-in must still be answered. A raised worker rests again once it finds the queue empty.
///
/// Each thread builds its own `Context` (its SQLite connection, its hasher) and only it touches it.
public final class WorkerPool<Context>: @unchecked Sendable {
    public typealias Job = @Sendable (inout Context) -> Void

    private struct Worker {
        var thread: pid_t = 0
        /// When its current job started (monotonic ns), or nil between jobs.
        var busySince: UInt64?
        var raised = false
    }

    private struct State {
        var jobs: [Job] = []
        var head = 0
        var stopping = false
        var workers: [Worker] = []
        /// When a worker last started or finished a job, or when the queue stopped being empty (monotonic ns).
        var lastProgress: UInt64 = 0
        /// How many times the watchdog raised the workers.
        var raisings = 0

        var waiting: Int { jobs.count - head }

        mutating func take(worker: Int, now: UInt64) -> Job? {
            guard head < jobs.count else { return nil }
            let job = jobs[head]
            head += 1
            lastProgress = now
            workers[worker].busySince = now
            if head > 1_024 && head * 2 > jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            return job
        }

        /// Whether work has stood still for `stall` ns: jobs waiting with no progress, or a job running that long.
        func stalled(now: UInt64, stall: UInt64) -> Bool {
            // A worker may have moved after `now` was read: then it has not stalled.
            func since(_ time: UInt64) -> Bool { now >= time && now - time >= stall }
            return (waiting > 0 && since(lastProgress)) || workers.contains { $0.busySince.map(since) ?? false }
        }

        var busy: Bool { waiting > 0 || workers.contains { $0.busySince != nil } }
    }

    public let threadCount: Int
    public let queueLimit: Int
    /// How long work may stand still before the workers are raised.
    public let stallLimit: Duration
    /// Whether the workers rest at idle priority (false: they stay at the caller's).
    public let idleWorkers: Bool
    private let state = Locked(State())
    private let available = DispatchSemaphore(value: 0)
    /// Signalled on every submit, so the watchdog sleeps for good while nothing is queued.
    private let watchdogWake = DispatchSemaphore(value: 0)
    private let makeContext: @Sendable () -> Context

    /// `idleWorkers: false` keeps the workers at the caller's priority (tests of the pool's own logic, which
    /// must not depend on how busy the machine running them is). Idle workers also need to be raisable
    /// (`ThreadScheduling.workersCanRestAtIdle`); where they are not, they run at nice 10 throughout.
    public init(threads: Int, queueLimit: Int, stallLimit: Duration = .milliseconds(500), idleWorkers: Bool = true,
                makeContext: @escaping @Sendable () -> Context) {
        self.threadCount = max(1, threads)
        self.queueLimit = max(1, queueLimit)
        self.stallLimit = stallLimit
        self.idleWorkers = idleWorkers && ThreadScheduling.workersCanRestAtIdle
        self.makeContext = makeContext
        state.withLock { $0.workers = Array(repeating: Worker(), count: threadCount) }
        for index in 0..<threadCount { startWorker(index) }
        if self.idleWorkers { startDetachedThread { [self] in self.watch() } }
    }

    /// How many times the workers were raised because work stood still.
    public var raisedCount: Int { state.withLock { $0.raisings } }

    /// The workers' kernel thread ids (0 until a thread has started), so tests can read their policy.
    var workerThreads: [pid_t] { state.withLock { $0.workers.map(\.thread) } }

    /// Jobs waiting for a thread (not counting those running).
    public var waitingCount: Int { state.withLock { $0.waiting } }

    /// Queues `job`; false when the queue is full (or the pool is stopping), and the job will never run.
    /// `bounded: false` is for cheap follow-up work (a token after a verified password), which must not be
    /// refused after the expensive part already ran.
    public func submit(bounded: Bool = true, _ job: @escaping Job) -> Bool {
        let now = Self.monotonicNow()
        let accepted = state.withLock { state -> Bool in
            guard !state.stopping, !bounded || state.waiting < queueLimit else { return false }
            // Waiting starts now; an idle pool has not stalled.
            if state.waiting == 0 { state.lastProgress = max(state.lastProgress, now) }
            state.jobs.append(job)
            return true
        }
        if accepted {
            available.signal()
            watchdogWake.signal()
        }
        return accepted
    }

    /// A fair guess at how long until a queued job would start, for `retry_after_ms`.
    public func estimatedWaitMs(perJobMs: Int64 = 40) -> Int64 {
        let waiting = Int64(waitingCount)
        return max(perJobMs, (waiting / Int64(threadCount) + 1) * perJobMs)
    }

    /// Lets the threads finish the queue, then end.
    public func stop() {
        state.withLock { $0.stopping = true }
        for _ in 0..<threadCount { available.signal() }
        watchdogWake.signal()
    }

    private func startWorker(_ index: Int) {
        startDetachedThread { [self] in
            ThreadScheduling.workerThread(restAtIdle: idleWorkers)
            let thread = ThreadScheduling.currentThreadID()
            state.withLock { $0.workers[index].thread = thread }
            work(index)
        }
    }

    private func work(_ index: Int) {
        var context = makeContext()
        while true {
            available.wait()
            let started = Self.monotonicNow()
            guard let job = state.withLock({ $0.take(worker: index, now: started) }) else {
                if state.withLock({ $0.stopping && $0.waiting == 0 }) { return }
                continue
            }
            job(&context)
            let finished = Self.monotonicNow()
            state.withLock { state in
                state.lastProgress = finished
                state.workers[index].busySince = nil
                // Raised because work stood still; with nothing left to do, it rests again.
                if state.workers[index].raised && state.waiting == 0 {
                    state.workers[index].raised = false
                    ThreadScheduling.rest()
                }
            }
        }
    }

    /// Sleeps until something is queued, then looks every half `stallLimit` whether work stood still for a
    /// whole `stallLimit`, and if so raises every resting worker. Policy changes happen under the lock, so a
    /// worker resting again and the watchdog raising it cannot cross.
    private func watch() {
        let stall = UInt64(max(0, stallLimit.nanoseconds))
        while true {
            watchdogWake.wait()
            while true {
                let now = Self.monotonicNow()
                let (busy, stopping) = state.withLock { state -> (Bool, Bool) in
                    if state.stalled(now: now, stall: stall), state.workers.contains(where: { !$0.raised }) {
                        state.raisings += 1
                        for index in state.workers.indices where !state.workers[index].raised {
                            state.workers[index].raised = true
                            ThreadScheduling.raise(state.workers[index].thread)
                        }
                    }
                    return (state.busy, state.stopping)
                }
                if !busy {
                    if stopping { return }
                    break
                }
                usleep(useconds_t(max(1_000, min(stall / 2_000, 1_000_000))))
            }
        }
    }

    private static func monotonicNow() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}

/// Runs `body` on a new detached pthread (Foundation's Thread would pull Foundation into the daemon's core).
func startDetachedThread(_ body: @escaping @Sendable () -> Void) {
    final class Start: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    let start = Unmanaged.passRetained(Start(body))
    var thread = pthread_t()
    let created = pthread_create(&thread, nil, { raw in
        guard let raw else { return nil }
        Unmanaged<Start>.fromOpaque(raw).takeRetainedValue().body()
        return nil
    }, start.toOpaque())
    if created == 0 {
        pthread_detach(thread)
    } else {
        start.release()
    }
}

extension WorkerPool {
    /// Runs `job` on a worker and hands its result to `completion` on `loop`'s thread. A `bounded` job (password
    /// hashing) refused by a full queue is answered `busy` at once; unbounded work is cheap and always queued.
    func run<T>(on loop: EventLoop, bounded: Bool = false,
                _ job: @escaping @Sendable (inout Context) -> Result<T, RosterError>,
                completion: @escaping (Result<T, RosterError>) -> Void) {
        let bound = LoopBound(value: completion)
        let accepted = submit(bounded: bounded) { context in
            let result = LoopBound(value: job(&context))
            loop.execute { bound.value(result.value) }
        }
        if !accepted { completion(.failure(.busy(retryAfterMs: estimatedWaitMs()))) }
    }
}

/// A value that is only ever touched on the loop thread, carried through a worker and back.
/// The loop is single-threaded, so crossing threads untouched is safe; touching it on a worker is not.
struct LoopBound<Value>: @unchecked Sendable {
    let value: Value
}
