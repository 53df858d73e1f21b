import Dispatch
import RosterCore
import Glibc

/// A fixed set of threads for work that must not run on the loop (Argon2id, libpwquality, durable writes),
/// with a bounded queue: when it is full, `submit` refuses at once so the caller can answer `busy`.
///
/// Workers run at idle priority (see `ThreadScheduling`). One more thread, the reserve, runs at the daemon's
/// own priority and takes jobs only while jobs are waiting and no worker has started or finished one for
/// `stallLimit`: on a host whose cores are all busy, idle-priority workers get no time at all, and a log-in
/// must still be answered.
///
/// Each thread builds its own `Context` (its SQLite connection, its hasher) and only it touches it.
public final class WorkerPool<Context>: @unchecked Sendable {
    public typealias Job = @Sendable (inout Context) -> Void

    private struct State {
        var jobs: [Job] = []
        var head = 0
        var stopping = false
        /// When a worker last started or finished a job, or when the queue stopped being empty (monotonic ns).
        /// The reserve's own jobs do not count: while the workers stay stalled, it keeps going.
        var lastProgress: UInt64 = 0
        /// Jobs the reserve thread ran, for tests and `admin.stats`.
        var rescued = 0

        var waiting: Int { jobs.count - head }

        mutating func take(now: UInt64?) -> Job? {
            guard head < jobs.count else { return nil }
            let job = jobs[head]
            head += 1
            if let now { lastProgress = now }
            if head > 1_024 && head * 2 > jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            return job
        }
    }

    public let threadCount: Int
    public let queueLimit: Int
    private let state = Locked(State())
    /// How long queued work may stand still before the reserve thread runs it.
    public let stallLimit: Duration
    private let available = DispatchSemaphore(value: 0)
    /// Signalled on every submit, so the reserve sleeps for good while nothing is queued.
    private let reserveWake = DispatchSemaphore(value: 0)
    private let makeContext: @Sendable () -> Context

    /// `idleWorkers: false` keeps the workers at the caller's priority (tests of the pool's own logic, which
    /// must not depend on how busy the machine running them is).
    public init(threads: Int, queueLimit: Int, stallLimit: Duration = .milliseconds(500), idleWorkers: Bool = true,
                makeContext: @escaping @Sendable () -> Context) {
        self.threadCount = max(1, threads)
        self.queueLimit = max(1, queueLimit)
        self.stallLimit = stallLimit
        self.makeContext = makeContext
        for _ in 0..<threadCount { startThread(idle: idleWorkers) }
        startDetachedThread { [self] in self.reserve() }
    }

    /// Jobs the reserve thread has run because the workers stood still.
    public var rescuedCount: Int { state.withLock { $0.rescued } }

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
            reserveWake.signal()
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
        reserveWake.signal()
    }

    private func next() -> Job? {
        available.wait()
        let now = Self.monotonicNow()
        return state.withLock { $0.take(now: now) }
    }

    private func work() {
        var context = makeContext()
        while true {
            guard let job = next() else {
                if state.withLock({ $0.stopping && $0.waiting == 0 }) { return }
                continue
            }
            job(&context)
            let now = Self.monotonicNow()
            state.withLock { $0.lastProgress = now }
        }
    }

    /// Sleeps until something is queued, then looks every half `stallLimit` whether the workers stood still for
    /// a whole `stallLimit`, and if so runs queued jobs until they move again. Its context is built on first need.
    private func reserve() {
        var context: Context?
        let stall = UInt64(max(0, stallLimit.nanoseconds))
        while true {
            reserveWake.wait()
            while true {
                let now = Self.monotonicNow()
                let (job, waiting, stopping) = state.withLock { state -> (Job?, Int, Bool) in
                    // A worker may have moved after `now` was read: then it has not stalled.
                    guard state.waiting > 0, now >= state.lastProgress, now - state.lastProgress >= stall else {
                        return (nil, state.waiting, state.stopping)
                    }
                    state.rescued += 1
                    return (state.take(now: nil), state.waiting, state.stopping)
                }
                if let job {
                    var working = context ?? makeContext()
                    job(&working)
                    context = working
                    // The job the reserve took still has a semaphore count a worker will find empty.
                    continue
                }
                if waiting == 0 {
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

    private func startThread(idle: Bool) {
        startDetachedThread { [self] in
            if idle { ThreadScheduling.workerThread() }
            self.work()
        }
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
