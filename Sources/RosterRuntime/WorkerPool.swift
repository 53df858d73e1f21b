import Dispatch
import RosterCore
import Glibc

/// A fixed set of threads for work that must not run on the loop, fed by a `FairQueue`: jobs are charged to
/// a payer and a connection, payers take turns, jobs of one order run one at a time, and past a budget
/// `submit` refuses at once so the caller can answer `busy`.
///
/// A `.standBack` pool (Argon2id) rests at idle priority (see `ThreadScheduling`). A watchdog thread, asleep
/// while nothing is queued, raises its workers to ordinary threads at the daemon's nice when a running job is
/// starved (its thread got less than `starvedShare` of a core over `starvedWindow`), when jobs wait and no
/// worker has started or finished one for `stallLimit`, or when a job has run that long: on a host whose cores
/// are all busy, idle-priority threads get almost no time, and a log-in must still be answered at about the
/// speed the host's other processes get. A raised worker rests again once it finds the queue empty. A `.normal`
/// pool (durable writes, reads, imports, exports) keeps the daemon's own priority: with every worker standing
/// back, a `contacts.add` took 233 ms instead of 12 ms with two CPU hogs on the host.
///
/// Each thread builds its own `Context` (its SQLite connection, its hasher) and only it touches it.
public final class WorkerPool<Context>: Sendable {
    public typealias Job = @Sendable (inout Context) -> Void

    /// How the workers share the cores with the loop and the rest of the host.
    public enum Priority: Sendable {
        /// SCHED_IDLE with the watchdog; nice 10 throughout where SCHED_IDLE cannot be undone.
        case standBack
        /// The daemon's own priority, untouched.
        case normal
    }

    public typealias Stats = WorkerPoolStats

    private struct Worker {
        var thread: pid_t = 0
        /// The thread's CPU-time clock, to tell a starved job from a long one.
        var cpuClock: clockid_t?
        /// When its current job started (monotonic ns), or nil between jobs.
        var busySince: UInt64?
        var raised = false
        /// The watchdog's last look at a running job: when (monotonic ns) and the thread's CPU time then.
        var lookedAt: (wall: UInt64, cpu: UInt64)?
    }

    private struct State {
        var queue: FairQueue<Job>
        var stopping = false
        /// Workers whose thread has ended (after `stop`).
        var ended = 0
        var workers: [Worker] = []
        /// When a worker last started or finished a job, or when the queue stopped being empty (monotonic ns).
        var lastProgress: UInt64 = 0
        /// How many times the watchdog raised the workers.
        var raisings = 0
        /// A moving average of how long a job runs, for `retry_after_ms`.
        var meanJobNs: Double

        var waiting: Int { queue.waiting }

        /// Whether work has stood still for `stall` ns: jobs waiting with no progress, or a job running that long.
        func stalled(now: UInt64, stall: UInt64) -> Bool {
            // A worker may have moved after `now` was read: then it has not stalled.
            func since(_ time: UInt64) -> Bool { now >= time && now - time >= stall }
            return (waiting > 0 && since(lastProgress)) || workers.contains { $0.busySince.map(since) ?? false }
        }

        var busy: Bool { waiting > 0 || workers.contains { $0.busySince != nil } }
    }

    /// What a worker does next.
    private enum Turn {
        case run(FairQueue<Job>.Entry)
        case stop
    }

    public let threadCount: Int
    /// How long work may stand still before the workers are raised.
    public let stallLimit: Duration
    /// A running job whose thread got less than this share of a core over `starvedWindow` is starved (an idle
    /// thread beside a busy-looping process gets well under 1 %; beside the daemon's own loop, most of a core).
    public static var starvedShare: Double { 0.1 }
    /// How long the watchdog watches a job before judging it starved: the delay a starved log-in pays.
    public let starvedWindow: Duration
    /// Whether the workers rest at idle priority (false: nice 10 throughout, or `.normal`'s own priority).
    public let idleWorkers: Bool
    public let priority: Priority
    private let state: Locked<State>
    /// Signalled on every submit, so the watchdog sleeps for good while nothing is queued.
    private let watchdogWake = DispatchSemaphore(value: 0)
    private let makeContext: @Sendable () -> Context

    /// `typicalJob` is the first guess at a job's run time, before any has run. Idle workers need to be
    /// raisable (`ThreadScheduling.workersCanRestAtIdle`); where they are not, `.standBack` means nice 10.
    public init(threads: Int, budget: QueueBudget, priority: Priority, stallLimit: Duration = .milliseconds(500),
         starvedWindow: Duration = .milliseconds(4), typicalJob: Duration = .milliseconds(40),
         makeContext: @escaping @Sendable () -> Context) {
        self.threadCount = max(1, threads)
        self.stallLimit = stallLimit
        self.starvedWindow = starvedWindow
        self.priority = priority
        self.idleWorkers = priority == .standBack && ThreadScheduling.workersCanRestAtIdle
        self.makeContext = makeContext
        state = Locked(State(queue: FairQueue(budget: budget), meanJobNs: Double(max(0, typicalJob.nanoseconds))))
        state.withLock { $0.workers = Array(repeating: Worker(), count: threadCount) }
        for index in 0..<threadCount { startWorker(index) }
        if idleWorkers { startDetachedThread { [self] in self.watch() } }
    }

    /// The budgets in force; a reload may change them (jobs already queued stay).
    public var budget: QueueBudget {
        get { state.withLock { $0.queue.budget } }
        set { state.withLock { $0.queue.budget = newValue } }
    }

    /// How many times the workers were raised because work stood still.
    public var raisedCount: Int { state.withLock { $0.raisings } }

    /// The workers' kernel thread ids (0 until a thread has started), so tests can read their policy.
    public var workerThreads: [pid_t] { state.withLock { $0.workers.map(\.thread) } }

    /// Jobs waiting for a thread (not counting those running).
    public var waitingCount: Int { state.withLock { $0.waiting } }

    public var stats: Stats {
        state.withLock { state in
            Stats(workers: threadCount, waiting: state.queue.waiting, running: state.queue.running,
                  limit: state.queue.budget.jobs, refused: state.queue.refused, raised: state.raisings)
        }
    }

    /// Queues `job`, charged as `charge`; a refusal (a budget is spent, or the pool is stopping) means it will
    /// never run. `force` is for work that must not be refused: what follows an expensive part that already
    /// ran (a token after a verified password), and the daemon's own chores. See `FairQueue` for the rules.
    public func submit(_ charge: QueueCharge, order: QueueOrder? = nil, force: Bool = false, _ job: @escaping Job) -> QueueRefusal? {
        let now = Self.monotonicNow()
        let refusal = state.withLock { state -> QueueRefusal? in
            guard !state.stopping else { return QueueRefusal(scope: .total, charged: state.queue.jobs) }
            // Waiting starts now; an idle pool has not stalled.
            if state.waiting == 0 { state.lastProgress = max(state.lastProgress, now) }
            return state.queue.enqueue(job, charge: charge, order: order, force: force)
        }
        if refusal == nil {
            state.signal()
            if idleWorkers { watchdogWake.signal() }
        }
        return refusal
    }

    /// A fair guess at when a job refused now would find room, for `retry_after_ms`: a place frees when a job
    /// charged there finishes, so the queue ahead spread over the threads, at the jobs' measured pace, and no
    /// more rounds than the refusing budget holds jobs (a user's own jobs free its places).
    public func retryAfterMs(for refusal: QueueRefusal) -> Int64 {
        let (waiting, meanNs) = state.withLock { ($0.waiting, $0.meanJobNs) }
        var rounds = waiting / threadCount + 1
        if refusal.scope != .total { rounds = min(rounds, max(1, refusal.charged)) }
        return Int64(min(60_000, max(10, (Double(rounds) * meanNs / 1_000_000).rounded(.up))))
    }

    /// Lets the threads finish the queue, and returns once every one has ended (and dropped its context: a
    /// storage worker's database connection is closed by then).
    public func stopAndWait() {
        stop()
        state.wait { $0.ended >= threadCount ? () : nil }
    }

    /// Lets the threads finish the queue, then end.
    public func stop() {
        state.withLock { $0.stopping = true }
        state.broadcast()
        watchdogWake.signal()
    }

    private func startWorker(_ index: Int) {
        startDetachedThread { [self] in
            if priority == .standBack { ThreadScheduling.standBackWorker(restAtIdle: idleWorkers) }
            let thread = ThreadScheduling.currentThreadID()
            var clock = clockid_t()
            let cpuClock = pthread_getcpuclockid(pthread_self(), &clock) == 0 ? clock : nil
            state.withLock {
                $0.workers[index].thread = thread
                $0.workers[index].cpuClock = cpuClock
            }
            work(index)
        }
    }

    private func work(_ index: Int) {
        serve(index)
        // Counted only once `serve` has dropped its context (see `stopAndWait`).
        state.withLock { $0.ended += 1 }
        state.broadcast()
    }

    private func serve(_ index: Int) {
        var context = makeContext()
        while true {
            let turn = state.wait { state -> Turn? in
                if let entry = state.queue.next() {
                    let started = Self.monotonicNow()
                    state.lastProgress = started
                    state.workers[index].busySince = started
                    return .run(entry)
                }
                // Jobs still waiting behind a running one of their order are finished before the end.
                return state.stopping && state.waiting == 0 ? .stop : nil
            }
            guard case .run(let entry) = turn else { return }
            entry.job(&context)
            let finished = Self.monotonicNow()
            let wakeOthers = state.withLock { state -> Bool in
                state.queue.finished(entry)
                if let started = state.workers[index].busySince, finished >= started {
                    state.meanJobNs += (Double(finished - started) - state.meanJobNs) / 8
                }
                state.lastProgress = finished
                state.workers[index].busySince = nil
                state.workers[index].lookedAt = nil
                // Raised because work stood still; with nothing left to do, it rests again.
                if state.workers[index].raised && state.waiting == 0 {
                    state.workers[index].raised = false
                    ThreadScheduling.rest()
                }
                return state.waiting > 0 || state.stopping
            }
            // Its order may have held a job back that another worker can take now (or the pool is ending).
            if wakeOthers { state.broadcast() }
        }
    }

    /// Sleeps until something is queued, then looks every half `stallLimit` whether work stood still for a
    /// whole `stallLimit`, and if so raises every resting worker. Policy changes happen under the lock, so a
    /// worker resting again and the watchdog raising it cannot cross.
    private func watch() {
        let stall = UInt64(max(0, stallLimit.nanoseconds))
        let window = UInt64(max(0, starvedWindow.nanoseconds))
        while true {
            watchdogWake.wait()
            while true {
                let now = Self.monotonicNow()
                let (busy, stopping) = state.withLock { state -> (Bool, Bool) in
                    let starved = Self.lookForStarved(&state, now: now, window: window)
                    if starved || state.stalled(now: now, stall: stall), state.workers.contains(where: { !$0.raised }) {
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
                usleep(useconds_t(max(1_000, min(stall / 2_000, window / 2_000, 1_000_000))))
            }
        }
    }

    /// Whether a resting worker's running job got less than `starvedShare` of a core since the last look at
    /// least `window` ago; each look starts the next measure.
    private static func lookForStarved(_ state: inout State, now: UInt64, window: UInt64) -> Bool {
        var starved = false
        for index in state.workers.indices {
            let worker = state.workers[index]
            guard !worker.raised, worker.busySince != nil, let clock = worker.cpuClock else {
                state.workers[index].lookedAt = nil
                continue
            }
            var spent = timespec()
            guard clock_gettime(clock, &spent) == 0 else { continue }
            let cpu = UInt64(spent.tv_sec) * 1_000_000_000 + UInt64(spent.tv_nsec)
            guard let last = worker.lookedAt else {
                state.workers[index].lookedAt = (now, cpu)
                continue
            }
            guard now >= last.wall, now - last.wall >= window else { continue }
            if Double(cpu &- last.cpu) < starvedShare * Double(now - last.wall) { starved = true }
            state.workers[index].lookedAt = (now, cpu)
        }
        return starved
    }

    private static func monotonicNow() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}

/// Runs `body` on a new detached pthread (Foundation's Thread would pull Foundation into the daemon's core).
/// False when no thread could be made (the process is at its limit): `body` then never runs.
@discardableResult
public func startDetachedThread(_ body: @escaping @Sendable () -> Void) -> Bool {
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
    return created == 0
}

extension WorkerPool {
    /// Runs `job` on a worker and hands its result to `completion` on `loop`'s thread; a job refused by a
    /// budget is answered at once with `refused(retryAfterMs)`, the wait guessed from the pool's pace.
    public func run<T: Sendable, Failure: Error>(on loop: EventLoop, charge: QueueCharge, order: QueueOrder? = nil,
                                                 force: Bool = false,
                                                 _ job: @escaping @Sendable (inout Context) -> Result<T, Failure>,
                                                 refused: (_ retryAfterMs: Int64) -> Failure,
                                                 completion: @escaping (Result<T, Failure>) -> Void) {
        let bound = LoopBound(value: completion)
        let refusal = submit(charge, order: order, force: force) { context in
            let result = job(&context)
            loop.execute { bound.value(result) }
        }
        if let refusal { completion(.failure(refused(retryAfterMs(for: refusal)))) }
    }

    /// As above, for jobs that answer the wire's errors: a refused job is `busy`.
    public func run<T: Sendable>(on loop: EventLoop, charge: QueueCharge, order: QueueOrder? = nil, force: Bool = false,
                                 _ job: @escaping @Sendable (inout Context) -> Result<T, RosterError>,
                                 completion: @escaping (Result<T, RosterError>) -> Void) {
        run(on: loop, charge: charge, order: order, force: force, job, refused: { .busy(retryAfterMs: $0) },
            completion: completion)
    }
}

/// A completion, which belongs to the loop thread, carried through a worker untouched and called back on the loop.
/// The loop is single-threaded, so crossing threads untouched is safe; calling it on a worker is not. Results
/// cross as `Sendable` values; only the completion needs this.
public struct LoopBound<Value>: @unchecked Sendable {
    public let value: Value

    public init(value: Value) { self.value = value }
}

/// What `admin.stats` shows of a pool.
public struct WorkerPoolStats: Equatable, Sendable {
    public var workers: Int
    public var waiting: Int
    public var running: Int
    public var limit: Int
    public var refused: Int
    public var raised: Int

    public init(workers: Int, waiting: Int, running: Int, limit: Int, refused: Int, raised: Int) {
        self.workers = workers
        self.waiting = waiting
        self.running = running
        self.limit = limit
        self.refused = refused
        self.raised = raised
    }
}
