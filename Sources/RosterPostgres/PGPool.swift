import RosterCore
import RosterRuntime
import RosterStorage

/// A few loop-driven connections to one database, with a fair, bounded queue in front: requests are pipelined
/// on the least-loaded connection (one caller's requests on one connection, so that they finish in order),
/// answered `.unavailable` at once while the database is down, `.busy` past the queue's budget. Connections
/// reconnect by themselves with backoff. Everything but construction runs on the loop thread; every
/// completion is called there, exactly once.
public final class PGPool {
    /// One caller's requests stay on one connection while any is in flight: a pipeline answers in order.
    private enum Caller: Hashable {
        case connection(UInt64)
        case payer(QueuePayer)

        init(_ charge: QueueCharge) {
            self = charge.connection.map(Caller.connection) ?? .payer(charge.payer)
        }
    }

    private final class Request {
        let statements: [PGStatement]
        let transaction: Bool
        let caller: Caller
        let completion: (Result<[PGResult], PGFailure>) -> Void

        init(statements: [PGStatement], transaction: Bool, caller: Caller,
             completion: @escaping (Result<[PGResult], PGFailure>) -> Void) {
            self.statements = statements
            self.transaction = transaction
            self.caller = caller
            self.completion = completion
        }
    }

    private enum Work {
        case request(Request)
        case lease((Result<PGLease, PGFailure>) -> Void)
    }

    private typealias Entry = FairQueue<Work>.Entry

    private struct Slot {
        let connection: PGConnection
        var leased = false
        /// Requests of a caller whose connection was full, sent there as it frees.
        var parked = FIFO<Entry>()
        /// Counts the connects, so that a lease from before a reconnect cannot use the new connection.
        var generation = 0
        var hasFailed = false
    }

    private var settings: PGPoolSettings
    private let loop: EventLoop
    private let logger: Logger
    private var slots: [Slot] = []
    private var queue: FairQueue<Work>
    private var affinity: [Caller: (slot: Int, count: Int)] = [:]
    private var running = false

    /// Whether requests can be served: `connecting` until the first connection is up or every one has failed.
    public private(set) var phase: StorageState.Phase = .connecting
    /// Called on the loop thread whenever `phase` changes.
    public var onPhaseChange: ((StorageState.Phase) -> Void)?

    public init(settings: PGPoolSettings, loop: EventLoop, logger: Logger) {
        self.settings = settings
        self.loop = loop
        self.logger = logger
        queue = FairQueue(budget: settings.budget)
        slots = (0..<settings.connections).map { _ in
            Slot(connection: PGConnection(conninfo: settings.conninfo, loop: loop, logger: logger, timing: settings.timing,
                                          setup: settings.poolSetup))
        }
        for index in slots.indices {
            slots[index].connection.onReady = { [unowned self] in self.connectionReady(index) }
            slots[index].connection.onBroken = { [unowned self] _, _ in self.connectionBroke(index) }
            slots[index].connection.onStalled = { [unowned self] in self.connectionStalled(index) }
        }
    }

    /// Connects in the background; never blocks the loop.
    public func start() {
        guard !running else { return }
        running = true
        logger.info("PostgreSQL pool connecting", [("conninfo", Conninfo.masked(settings.conninfo)),
                                                   ("connections", "\(slots.count)")])
        for slot in slots { slot.connection.start() }
    }

    /// Closes every connection; what is in flight or waiting is answered `.unavailable`.
    public func stop() {
        guard running else { return }
        running = false
        for slot in slots { slot.connection.stop() }
        for index in slots.indices { failParked(index) }
        failWaiting()
    }

    /// A reload's `MaxQueuedJobs=`: the budget requests are refused past from now on. What already waits keeps
    /// its place; a smaller limit only refuses new requests until the queue is below it.
    public func apply(queueLimit: Int) {
        settings.queueLimit = max(1, queueLimit)
        queue.budget = settings.budget
    }

    /// What `admin.stats` shows: workers are the connections up.
    public var stats: WorkerPoolStats {
        WorkerPoolStats(workers: slots.filter { $0.connection.isReady }.count, waiting: queue.waiting, running: queue.running,
                        limit: queue.budget.jobs, refused: queue.refused, raised: 0)
    }

    /// Statements in order on one connection, pipelined in one round trip; with `transaction` they commit or roll
    /// back together (one pipeline segment: an implicit transaction), and a failure answers the first failure.
    /// Without, each statement stands alone and the first failure is answered. Completion on the loop, once.
    /// While down: `.unavailable` at once. Past the budget: `.busy`, unless `force` (work the storage protocols
    /// say is never refused by a budget), which still waits its turn.
    public func execute(_ statements: [PGStatement], transaction: Bool, charge: QueueCharge, force: Bool = false,
                        completion: @escaping (Result<[PGResult], PGFailure>) -> Void) {
        let request = Request(statements: statements, transaction: transaction, caller: Caller(charge), completion: completion)
        submit(.request(request), charge: charge, force: force) { completion(.failure($0)) }
    }

    /// One connection held for an interactive transaction (read, decide in Swift, write), until `release()`.
    /// Refused as `execute` is.
    public func lease(charge: QueueCharge, force: Bool = false, completion: @escaping (Result<PGLease, PGFailure>) -> Void) {
        submit(.lease(completion), charge: charge, force: force) { completion(.failure($0)) }
    }

    private func submit(_ work: Work, charge: QueueCharge, force: Bool, refuse: (PGFailure) -> Void) {
        guard running, phase != .down else {
            refuse(.unavailable(retryAfterMs: retryAfterMs()))
            return
        }
        if queue.enqueue(work, charge: charge, force: force) != nil {
            refuse(.busy(retryAfterMs: busyRetryAfterMs()))
            return
        }
        pump()
    }

    // MARK: Dispatch

    private func load(_ index: Int) -> Int { slots[index].connection.inFlightCount + slots[index].parked.count }

    private func usable(_ index: Int) -> Bool { slots[index].connection.isReady && !slots[index].leased }

    /// The least-loaded connection that takes another request.
    private func availableSlot() -> Int? {
        slots.indices.filter { usable($0) && load($0) < settings.pipelineDepth }.min { load($0) < load($1) }
    }

    private func pump() {
        guard running, phase == .up else { return }
        // A caller bound to a full connection parks there; past a pipeline's worth per connection parked in all,
        // the rest stays in the fair queue, where payers take turns, rather than leaving it for one line.
        let parkedLimit = settings.pipelineDepth * slots.count
        while parkedCount < parkedLimit, let index = availableSlot(), let entry = queue.next() {
            switch entry.job {
            case .request(let request): place(entry, request, fallback: index)
            case .lease(let completion): grant(entry, completion, slot: index)
            }
        }
    }

    private var parkedCount: Int { slots.reduce(0) { $0 + $1.parked.count } }

    /// Sends the request, or parks it behind its caller's earlier ones.
    private func place(_ entry: Entry, _ request: Request, fallback: Int) {
        var target = fallback
        if let bound = affinity[request.caller], usable(bound.slot) { target = bound.slot }
        affinity[request.caller] = (target, (affinity[request.caller]?.count ?? 0) + 1)
        // Behind parked requests it parks too: they may be this caller's own, and must go first.
        guard slots[target].parked.isEmpty && slots[target].connection.inFlightCount < settings.pipelineDepth else {
            slots[target].parked.append(entry)
            return
        }
        send(entry, request, slot: target)
    }

    private func send(_ entry: Entry, _ request: Request, slot index: Int) {
        slots[index].connection.execute(request.statements, transaction: request.transaction) { result in
            self.finish(entry, request, slot: index, result)
        }
    }

    private func finish(_ entry: Entry, _ request: Request, slot index: Int, _ result: Result<[PGResult], PGFailure>) {
        queue.finished(entry)
        if let bound = affinity[request.caller] {
            affinity[request.caller] = bound.count > 1 ? (bound.slot, bound.count - 1) : nil
        }
        request.completion(result)
        sendParked(index)
        pump()
    }

    private func sendParked(_ index: Int) {
        while slots[index].connection.isReady, slots[index].connection.inFlightCount < settings.pipelineDepth,
              let entry = slots[index].parked.popFirst() {
            guard case .request(let request) = entry.job else { continue }
            send(entry, request, slot: index)
        }
    }

    private func grant(_ entry: Entry, _ completion: (Result<PGLease, PGFailure>) -> Void, slot index: Int) {
        slots[index].leased = true
        let generation = slots[index].generation
        let lease = PGLease(run: { statements, completion in
            self.leaseExecute(slot: index, generation: generation, statements, completion: completion)
        }, onRelease: { used in
            self.leaseReleased(slot: index, generation: generation, entry: entry, used: used)
        })
        completion(.success(lease))
    }

    // MARK: Leases

    private func leaseExecute(slot index: Int, generation: Int, _ statements: [PGStatement],
                      completion: @escaping (Result<[PGResult], PGFailure>) -> Void) {
        guard slots[index].generation == generation, slots[index].connection.isReady else {
            completion(.failure(.unavailable(retryAfterMs: retryAfterMs())))
            return
        }
        slots[index].connection.execute(statements, transaction: true, completion: completion)
    }

    private func leaseReleased(slot index: Int, generation: Int, entry: Entry, used: Bool) {
        queue.finished(entry)
        if slots[index].generation == generation, used {
            // Whatever the holder left open is rolled back before anyone else's request runs on this connection
            // (the pipeline keeps the order); outside a transaction it is a harmless warning.
            slots[index].connection.chore([PGStatement("ROLLBACK")])
        }
        slots[index].leased = false
        pump()
    }

    // MARK: Phase

    private func connectionReady(_ index: Int) {
        slots[index].generation += 1
        updatePhase()
        sendParked(index)
        pump()
    }

    /// One request went unanswered past its deadline: the server stopped answering, and every other connection
    /// to it would hold its requests as long. So the pool is down from now on, not after each connection's own
    /// deadline: the others are closed (what they had in flight answered `.unavailable`), what waits is answered,
    /// and everything asked until a connection is back is refused at once. Each connection reconnects on its own
    /// backoff, one attempt at a time, which is the only probe: nothing is sent to the server meanwhile.
    private func connectionStalled(_ index: Int) {
        slots[index].hasFailed = true
        guard running else { return }
        if phase != .down {
            logger.warning("PostgreSQL stopped answering: no answer within \(settings.timing.requestTimeout.milliseconds) ms; "
                           + "requests answer storage_unavailable until a connection is back",
                           [("conninfo", Conninfo.masked(settings.conninfo))])
        }
        for other in slots.indices where other != index {
            slots[other].hasFailed = true
            slots[other].connection.abandon(reason: "another connection to the server got no answer in time")
        }
        updatePhase()
    }

    private func connectionBroke(_ index: Int) {
        slots[index].hasFailed = true
        failParked(index)
        updatePhase()
    }

    /// Parked requests were never sent: nothing of theirs can have been written.
    private func failParked(_ index: Int) {
        for entry in slots[index].parked.drain() {
            guard case .request(let request) = entry.job else { continue }
            finish(entry, request, slot: index, .failure(.unavailable(retryAfterMs: retryAfterMs())))
        }
    }

    private func updatePhase() {
        let next: StorageState.Phase
        if slots.contains(where: { $0.connection.isReady }) {
            next = .up
        } else if phase == .connecting && slots.contains(where: { !$0.hasFailed }) {
            next = .connecting
        } else {
            next = .down
        }
        guard next != phase else { return }
        phase = next
        logger.debug("PostgreSQL pool \(next.rawValue)", [("conninfo", Conninfo.masked(settings.conninfo))])
        if next == .down { failWaiting() }
        onPhaseChange?(next)
    }

    /// While down nothing waits: every waiting request is answered `.unavailable`.
    private func failWaiting() {
        let failure = PGFailure.unavailable(retryAfterMs: retryAfterMs())
        while let entry = queue.next() {
            queue.finished(entry)
            switch entry.job {
            case .request(let request): request.completion(.failure(failure))
            case .lease(let completion): completion(.failure(failure))
            }
        }
    }

    /// When the next reconnect may have brought a connection back; never under `reconnectMinMs`, because a
    /// client told "1 ms" just after an attempt failed would only ask again into the same outage.
    private func retryAfterMs() -> Int64 {
        let next = slots.map { $0.connection.retryAfterMs() }.min() ?? Int64(settings.reconnectMinMs)
        return max(Int64(settings.reconnectMinMs), next)
    }

    /// A place frees when a request finishes: the queue ahead spread over the connections' pipelines, a few
    /// milliseconds a round.
    private func busyRetryAfterMs() -> Int64 {
        let perRound = max(1, slots.count * settings.pipelineDepth)
        return Int64(min(60_000, max(10, (queue.waiting / perRound + 1) * 5)))
    }
}

/// One connection held for an interactive transaction, until `release()`; its statements run in order, each
/// call's statements as one pipeline segment. Loop thread only.
public final class PGLease {
    typealias Run = ([PGStatement], @escaping (Result<[PGResult], PGFailure>) -> Void) -> Void

    private let run: Run
    private let onRelease: (_ used: Bool) -> Void
    private var released = false
    private var used = false

    init(run: @escaping Run, onRelease: @escaping (_ used: Bool) -> Void) {
        self.run = run
        self.onRelease = onRelease
    }

    /// Runs `statements` on the held connection (after whatever this lease sent before); `.unavailable` once
    /// released or once that connection broke.
    public func execute(_ statements: [PGStatement], completion: @escaping (Result<[PGResult], PGFailure>) -> Void) {
        guard !released else {
            completion(.failure(.unavailable(retryAfterMs: 0)))
            return
        }
        used = true
        run(statements, completion)
    }

    /// Gives the connection back; a lease released inside a transaction is rolled back first. Twice does nothing.
    public func release() {
        guard !released else { return }
        released = true
        onRelease(used)
    }
}
