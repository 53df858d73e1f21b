import Dispatch
import RosterCore
import Glibc

/// A fixed set of threads for work that must not run on the loop (Argon2id, libpwquality, durable writes),
/// with a bounded queue: when it is full, `submit` refuses at once so the caller can answer `busy`.
///
/// Each thread builds its own `Context` (its SQLite connection, its hasher) and only it touches it.
public final class WorkerPool<Context>: @unchecked Sendable {
    public typealias Job = @Sendable (inout Context) -> Void

    private struct State {
        var jobs: [Job] = []
        var head = 0
        var running = 0
        var stopping = false

        var waiting: Int { jobs.count - head }
    }

    public let threadCount: Int
    public let queueLimit: Int
    private let state = Locked(State())
    private let available = DispatchSemaphore(value: 0)
    private let makeContext: @Sendable () -> Context

    public init(threads: Int, queueLimit: Int, makeContext: @escaping @Sendable () -> Context) {
        self.threadCount = max(1, threads)
        self.queueLimit = max(1, queueLimit)
        self.makeContext = makeContext
        for _ in 0..<threadCount { startThread() }
    }

    /// Jobs waiting for a thread (not counting those running).
    public var waitingCount: Int { state.withLock { $0.waiting } }

    /// Queues `job`; false when the queue is full (or the pool is stopping), and the job will never run.
    /// `bounded: false` is for cheap follow-up work (a token after a verified password), which must not be
    /// refused after the expensive part already ran.
    public func submit(bounded: Bool = true, _ job: @escaping Job) -> Bool {
        let accepted = state.withLock { state -> Bool in
            guard !state.stopping, !bounded || state.waiting < queueLimit else { return false }
            state.jobs.append(job)
            return true
        }
        if accepted { available.signal() }
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
    }

    private func next() -> Job? {
        available.wait()
        return state.withLock { state -> Job? in
            guard state.head < state.jobs.count else { return nil }
            let job = state.jobs[state.head]
            state.head += 1
            if state.head > 1_024 && state.head * 2 > state.jobs.count {
                state.jobs.removeFirst(state.head)
                state.head = 0
            }
            return job
        }
    }

    private func work() {
        var context = makeContext()
        while true {
            guard let job = next() else {
                if state.withLock({ $0.stopping && $0.waiting == 0 }) { return }
                continue
            }
            job(&context)
        }
    }

    private func startThread() {
        startDetachedThread { [self] in
            ThreadScheduling.workerThread()
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
