import RosterCore

/// One request in a connection's pipeline: statements that go out together and are answered together.
struct PGPipelineRequest: Equatable {
    /// Who the answer is for.
    enum Kind: Equatable {
        /// A caller, who gets `deliver`.
        case caller
        /// `SET statement_timeout` (and a listener's LISTEN) after each connect: the connection is ready once it is done.
        case setup
        /// A `SELECT 1` on an idle connection, to find a dead one before a caller does.
        case heartbeat
        /// The connection's own work whose answer nobody waits for (a released lease's ROLLBACK).
        case chore
    }

    let id: UInt64
    let kind: Kind
    let statements: [PGStatement]
    /// One pipeline segment (one Sync) for all statements, so that they commit or roll back together (an
    /// implicit transaction); otherwise a Sync after each statement, so that each stands on its own.
    let transaction: Bool

    /// How many Syncs the driver sends, and so how many `PGRES_PIPELINE_SYNC` results end this request.
    var segments: Int { transaction ? 1 : max(1, statements.count) }
}

/// One libpq connection as a sans-I/O machine, in the shape of postgres-nio's `ConnectionStateMachine`: facts
/// come in (what `PQconnectPoll` said, whether output is still pending, each result read, a connection failure,
/// the timer), actions go out (connect, watch the socket for reading and/or writing, send a request, deliver an
/// answer, close, set the timer). It owns the pipeline's bookkeeping, the deadlines, the heartbeat and the
/// reconnect backoff; the driver (`PGConnection`) owns libpq and the loop.
struct PGConnectionStateMachine {
    /// The connection's timings.
    struct Timing: Equatable {
        var connectTimeout: Duration
        /// How long a request may go unanswered before the connection counts as dead: longer than
        /// statement_timeout, so that the server's own cancel normally comes first.
        var requestTimeout: Duration
        var heartbeat: Duration
        var reconnectMin: Duration
        var reconnectMax: Duration
    }

    enum State: Equatable {
        case stopped
        /// Connecting, or running the setup after connecting.
        case connecting
        /// Ready, nothing in flight.
        case idle
        /// Ready, requests in flight.
        case busy
        /// Closed after a failure; reconnects at `retryAt`.
        case broken(retryAt: Instant)
    }

    /// What `PQconnectPoll` answered.
    enum ConnectPoll: Equatable {
        case reading, writing, ok, failed
    }

    enum Action: Equatable {
        /// `PQconnectStartParams`, then feed `connectPolled(.writing)` (or `.failed`).
        case connect
        /// Set non-blocking and enter pipeline mode: the connection is up.
        case enterPipelineMode
        /// Watch the socket for these (level-triggered).
        case watch(readable: Bool, writable: Bool)
        /// `PQsendQueryParams` for each statement, `PQpipelineSync` after each segment, then `PQflush`.
        case send(PGPipelineRequest)
        /// A caller's answer.
        case deliver(id: UInt64, Result<[PGResult], PGFailure>)
        /// `PQfinish` and stop watching.
        case close
        /// Call `timerFired` at this instant (nil: no timer).
        case setTimer(Instant?)
        /// Ready to take requests (after every connect, once the setup is done).
        case ready
        /// Was ready or connecting, and is now closed; retries at `retryAt`.
        case broke(retryAt: Instant, reason: String)
        /// A request went unanswered past its deadline: the server has stopped answering (frozen, or its host
        /// gone), so the other connections to it are as good as dead too. Comes first among the failure's
        /// actions, so that whoever is told of it can stop sending before any caller hears its answer.
        case stalled
    }

    private struct InFlight {
        let request: PGPipelineRequest
        let deadline: Instant
        var segmentsLeft: Int
        var results: [PGResult] = []
        var failure: PGFailure?
    }

    let timing: Timing
    /// Statements run after each connect, before the connection is ready.
    let setup: [PGStatement]
    /// A number in 0..<1 for the reconnect jitter.
    private let random: () -> Double

    private(set) var state: State = .stopped
    private var inFlight: [InFlight] = []
    private var outputPending = false
    private var watching: (readable: Bool, writable: Bool)?
    private var connectDeadline: Instant?
    private var lastActivity: Instant = .zero
    /// Failed connects since the last successful one: the backoff's exponent.
    private(set) var consecutiveFailures = 0
    private var armedTimer: Instant?
    private var nextInternalID: UInt64 = 1 << 62

    init(timing: Timing, setup: [PGStatement], random: @escaping () -> Double) {
        self.timing = timing
        self.setup = setup
        self.random = random
    }

    /// Whether it takes requests now.
    var isReady: Bool { state == .idle || state == .busy }

    /// Requests sent and not yet answered (callers' and its own).
    var inFlightCount: Int { inFlight.count }

    /// When a caller refused now should try again.
    func retryAfterMs(now: Instant) -> Int64 {
        if case .broken(let retryAt) = state { return max(1, (retryAt - now).milliseconds) }
        return max(1, timing.reconnectMin.milliseconds)
    }

    // MARK: Facts

    mutating func start(now: Instant) -> [Action] {
        guard state == .stopped else { return [] }
        return beginConnecting(now: now)
    }

    mutating func stop(now: Instant) -> [Action] {
        guard state != .stopped else { return [] }
        var actions = failInFlight(now: now, expiredAt: nil)
        if !isBrokenState { actions.append(.close) }
        state = .stopped
        watching = nil
        actions.append(contentsOf: timer(now: now))
        return actions
    }

    mutating func connectPolled(_ poll: ConnectPoll, now: Instant) -> [Action] {
        guard state == .connecting, inFlight.isEmpty else { return [] }
        // Always said while connecting, even when unchanged: libpq may have moved to another socket (the next
        // address), and the driver watches afresh each time.
        switch poll {
        case .reading:
            watching = (true, false)
            return [.watch(readable: true, writable: false)]
        case .writing:
            watching = (false, true)
            return [.watch(readable: false, writable: true)]
        case .failed: return fail(now: now, reason: "connect failed")
        case .ok:
            lastActivity = now
            var actions: [Action] = [.enterPipelineMode]
            actions += watch(readable: true, writable: false)
            actions += send(PGPipelineRequest(id: internalID(), kind: .setup, statements: setup, transaction: false), now: now)
            return actions + timer(now: now)
        }
    }

    /// Whether libpq holds output not yet written (after a send, and after every `PQflush`): while it does, the
    /// socket is watched for writing too.
    mutating func flushed(outputPending pending: Bool) -> [Action] {
        outputPending = pending
        guard isReady || (state == .connecting && !inFlight.isEmpty) else { return [] }
        return watch(readable: true, writable: pending)
    }

    /// One result read with `PQgetResult`, in pipeline order.
    mutating func received(_ outcome: LibPQ.Outcome, now: Instant) -> [Action] {
        guard !inFlight.isEmpty else { return fail(now: now, reason: "a result nobody asked for") }
        lastActivity = now
        switch outcome {
        case .done(let result):
            if inFlight[0].failure == nil { inFlight[0].results.append(result) }
            return []
        case .failed(let failure):
            if inFlight[0].failure == nil { inFlight[0].failure = failure }
            return []
        case .aborted:
            return []
        case .sync:
            inFlight[0].segmentsLeft -= 1
            guard inFlight[0].segmentsLeft == 0 else { return [] }
            return complete(inFlight.removeFirst(), now: now)
        }
    }

    /// The connection failed (a read, a write or a send said so): every request in flight is answered
    /// `.unavailable`, none is retried (a write may have committed).
    mutating func failed(reason: String, now: Instant) -> [Action] {
        guard state != .stopped, !isBrokenState else { return [] }
        return fail(now: now, reason: reason)
    }

    /// A request to send now; refused with `.unavailable` unless ready.
    mutating func enqueue(id: UInt64, statements: [PGStatement], transaction: Bool, now: Instant) -> [Action] {
        guard isReady else { return [.deliver(id: id, .failure(.unavailable(retryAfterMs: retryAfterMs(now: now))))] }
        return send(PGPipelineRequest(id: id, kind: .caller, statements: statements, transaction: transaction), now: now)
            + timer(now: now)
    }

    /// Work of the connection's own, answered to nobody (a released lease's ROLLBACK).
    mutating func enqueueChore(_ statements: [PGStatement], now: Instant) -> [Action] {
        guard isReady else { return [] }
        return send(PGPipelineRequest(id: internalID(), kind: .chore, statements: statements, transaction: false), now: now)
            + timer(now: now)
    }

    mutating func timerFired(now: Instant) -> [Action] {
        armedTimer = nil
        switch state {
        case .stopped:
            return []
        case .broken(let retryAt):
            guard now >= retryAt else { return timer(now: now) }
            return beginConnecting(now: now)
        case .connecting:
            if inFlight.isEmpty, let connectDeadline, now >= connectDeadline {
                return fail(now: now, reason: "connect timed out")
            }
        case .idle:
            if now >= lastActivity + timing.heartbeat {
                let heartbeat = PGPipelineRequest(id: internalID(), kind: .heartbeat, statements: [PGStatement("SELECT 1")],
                                                  transaction: false)
                return send(heartbeat, now: now) + timer(now: now)
            }
        case .busy:
            break
        }
        if inFlight.contains(where: { $0.deadline <= now }) {
            return [.stalled] + fail(now: now, reason: "no answer in time", expiredAt: now)
        }
        return timer(now: now)
    }

    // MARK: Steps

    private var isBrokenState: Bool {
        if case .broken = state { return true }
        return false
    }

    private mutating func beginConnecting(now: Instant) -> [Action] {
        state = .connecting
        watching = nil
        outputPending = false
        connectDeadline = now + timing.connectTimeout
        return [.connect] + timer(now: now)
    }

    private mutating func send(_ request: PGPipelineRequest, now: Instant) -> [Action] {
        inFlight.append(InFlight(request: request, deadline: now + timing.requestTimeout, segmentsLeft: request.segments))
        if state == .idle { state = .busy }
        return [.send(request)]
    }

    private mutating func complete(_ done: InFlight, now: Instant) -> [Action] {
        var actions: [Action] = []
        switch done.request.kind {
        case .caller:
            actions.append(.deliver(id: done.request.id, done.failure.map { .failure($0) } ?? .success(done.results)))
        case .setup:
            if let failure = done.failure { return fail(now: now, reason: "setup failed: \(failure.reason)") }
            consecutiveFailures = 0
            state = .busy
            actions.append(.ready)
        case .heartbeat:
            if let failure = done.failure { return fail(now: now, reason: "heartbeat failed: \(failure.reason)") }
        case .chore:
            break
        }
        if isReady { state = inFlight.isEmpty ? .idle : .busy }
        return actions + timer(now: now)
    }

    /// Closes the connection after a failure: callers in flight get `.unavailable` (those past their deadline
    /// `.timeout`), and a reconnect is due after the backoff.
    private mutating func fail(now: Instant, reason: String, expiredAt: Instant? = nil) -> [Action] {
        let retryAt = now + backoff()
        consecutiveFailures += 1
        state = .broken(retryAt: retryAt)
        var actions = failInFlight(now: now, expiredAt: expiredAt)
        watching = nil
        outputPending = false
        actions.append(.close)
        actions.append(.broke(retryAt: retryAt, reason: reason))
        return actions + timer(now: now)
    }

    private mutating func failInFlight(now: Instant, expiredAt: Instant?) -> [Action] {
        let retry = retryAfterMs(now: now)
        let failed = inFlight
        inFlight.removeAll()
        return failed.compactMap { entry in
            guard entry.request.kind == .caller else { return nil }
            let expired = expiredAt.map { entry.deadline <= $0 } ?? false
            return .deliver(id: entry.request.id, .failure(expired ? .timeout : .unavailable(retryAfterMs: retry)))
        }
    }

    /// Exponential from `reconnectMin`, capped at `reconnectMax`, each wait drawn from its upper half so that
    /// many daemons that lost one server do not all come back in the same millisecond.
    private func backoff() -> Duration {
        let exponent = min(consecutiveFailures, 30)
        let minimum = Double(timing.reconnectMin.nanoseconds)
        let full = min(Double(timing.reconnectMax.nanoseconds), minimum * Double(1 << exponent))
        let jittered = full * (0.5 + 0.5 * min(max(random(), 0), 1))
        return .nanoseconds(Int64(jittered))
    }

    private mutating func watch(readable: Bool, writable: Bool) -> [Action] {
        if let watching, watching == (readable, writable) { return [] }
        watching = (readable, writable)
        return [.watch(readable: readable, writable: writable)]
    }

    private mutating func internalID() -> UInt64 {
        nextInternalID += 1
        return nextInternalID
    }

    /// The one instant the machine wants to hear from the timer next.
    private mutating func timer(now: Instant) -> [Action] {
        let wanted: Instant?
        switch state {
        case .stopped: wanted = nil
        case .broken(let retryAt): wanted = retryAt
        case .connecting: wanted = earliest(inFlight.first.map(\.deadline) ?? connectDeadline)
        case .idle: wanted = lastActivity + timing.heartbeat
        case .busy: wanted = earliest(nil)
        }
        // A timer armed earlier than wanted is left to fire (it finds nothing due and sets the next): a busy
        // connection's earliest deadline moves on with every answer, and re-arming each time costs a syscall.
        switch (armedTimer, wanted) {
        case (nil, nil): return []
        case (let armed?, let wanted?) where armed <= wanted: return []
        default:
            armedTimer = wanted
            return [.setTimer(wanted)]
        }
    }

    private func earliest(_ other: Instant?) -> Instant? {
        let deadlines = inFlight.map(\.deadline) + (other.map { [$0] } ?? [])
        return deadlines.min()
    }
}

extension Duration {
    /// Whole milliseconds, rounded up, for `retry_after_ms`.
    var milliseconds: Int64 { (nanoseconds + 999_999) / 1_000_000 }
}
