import RosterCore

// PGConnectionStateMachine — one libpq connection as a sans-I/O machine, in the shape of postgres-nio's
// `ConnectionStateMachine`: facts in (what `PQconnectPoll` said, whether output is still pending, each result
// read, a failure, the timer, a request), actions out (connect, watch the socket, send, deliver, close, set the
// timer). It owns the pipeline's bookkeeping, the deadlines, the heartbeat and the reconnect backoff; the driver
// (`PGConnection`) owns libpq, the socket and the loop.
//
// STATES (each carries what is true only in it)
//   stopped                       not started, or stopped for good
//   connecting(deadline, watching) PQconnectPoll under way; gives up at `deadline` (connectTimeout)
//   settingUp(setup, watching)    connected; the setup (SET statement_timeout, a listener's LISTEN) is the only
//                                 request in flight, and nothing else is taken until it is done
//   idle(since, watching)         ready, nothing in flight; a heartbeat is due at `since + heartbeat`
//   busy(pipeline, watching)      ready, one request or more in flight (the pipeline is never empty)
//   broken(retryAt)               closed after a failure; connects again at `retryAt`
//
// TRANSITIONS
//   stopped     start                         → connecting          connect, timer(connect deadline)
//   connecting  poll reading / writing        → connecting          watch (said every time: libpq may be on a new socket)
//   connecting  poll ok                       → settingUp           enterPipelineMode, watch, send(setup), timer
//   connecting  poll failed, timer ≥ deadline → broken              close, broke, timer(retryAt)
//   settingUp   setup answered                → idle                ready, timer(heartbeat)
//   settingUp   setup failed                  → broken              close, broke, timer(retryAt)
//   idle        request / chore               → busy                send, timer
//   idle        timer ≥ since + heartbeat     → busy                send(SELECT 1), timer
//   busy        request / chore               → busy                send, timer (only if earlier than the one armed)
//   busy        last result of the oldest     → busy or idle        deliver (a caller's), timer
//   busy        heartbeat failed              → broken              close, broke, timer(retryAt)
//   settingUp,
//   busy        timer ≥ a deadline            → broken              stalled, deliver (.timeout / .unavailable), close,
//                                                                   broke, timer(retryAt)
//   any but
//   stopped,
//   broken      failed (read, write, send)    → broken              deliver(.unavailable) for each caller, close, broke,
//                                                                   timer(retryAt)
//   idle,
//   connecting  a result                      → broken              (nobody asked for it) close, broke, timer
//   broken      timer ≥ retryAt               → connecting          connect, timer(connect deadline)
//   any         stop                          → stopped             deliver(.unavailable) for each caller, close
//                                                                   (unless broken), timer(nil)
//   A request while not ready is answered `.unavailable` at once; a chore then is dropped. Any other fact that
//   does not apply to the state (a poll once connected, a flush while not connected, a failure while broken)
//   yields nothing and changes nothing.
//
// RULES
//   Nothing in flight is ever resent: a connection that fails answers its callers `.unavailable` (a write may
//   have committed), and one whose request is overdue answers that request `.timeout`.
//   The backoff is exponential from reconnectMin to reconnectMax, each wait drawn from its upper half.
//   The timer is armed for the one instant the machine wants next; one armed earlier is left to fire.

/// One libpq connection as a sans-I/O machine (see the table above): facts in, actions out, time as `now`.
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

    /// Where the connection is, with what is true only there.
    enum State: Equatable {
        case stopped
        /// `PQconnectPoll` under way, given up at `deadline`; `watching` is what the last poll asked for.
        case connecting(deadline: Instant, watching: Watch?)
        /// Connected, running the setup: the one request in flight.
        case settingUp(InFlight, watching: Watch)
        /// Ready, nothing in flight, last heard from the server at `since`.
        case idle(since: Instant, watching: Watch)
        /// Ready, requests in flight.
        case busy(Pipeline, watching: Watch)
        /// Closed after a failure; reconnects at `retryAt`.
        case broken(retryAt: Instant)
    }

    /// The state without its data, for those who only ask where the connection is.
    enum Phase: Equatable {
        case stopped, connecting, settingUp, idle, busy
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

    let timing: Timing
    /// Statements run after each connect, before the connection is ready.
    let setup: [PGStatement]
    /// A number in 0..<1 for the reconnect jitter.
    private let random: () -> Double

    private(set) var state: State = .stopped
    /// Failed connects since the last successful one: the backoff's exponent. It outlives every state (a stop and
    /// a start do not forgive an outage), so it is the machine's, not a state's.
    private(set) var consecutiveFailures = 0
    /// The instant the driver's timer is set for, whatever the state: so that the same one is not set again.
    private var armedTimer: Instant?
    private var nextInternalID: UInt64 = 1 << 62

    init(timing: Timing, setup: [PGStatement], random: @escaping () -> Double) {
        self.timing = timing
        self.setup = setup
        self.random = random
    }

    var phase: Phase {
        switch state {
        case .stopped: .stopped
        case .connecting: .connecting
        case .settingUp: .settingUp
        case .idle: .idle
        case .busy: .busy
        case .broken(let retryAt): .broken(retryAt: retryAt)
        }
    }

    /// Whether it takes requests now.
    var isReady: Bool {
        switch state {
        case .idle, .busy: true
        case .stopped, .connecting, .settingUp, .broken: false
        }
    }

    /// Requests sent and not yet answered (callers' and its own).
    var inFlightCount: Int {
        switch state {
        case .settingUp: 1
        case .busy(let pipeline, _): pipeline.count
        case .stopped, .connecting, .idle, .broken: 0
        }
    }

    /// When a caller refused now should try again.
    func retryAfterMs(now: Instant) -> Int64 {
        switch state {
        case .broken(let retryAt): max(1, (retryAt - now).milliseconds)
        case .stopped, .connecting, .settingUp, .idle, .busy: max(1, timing.reconnectMin.milliseconds)
        }
    }

    // MARK: Facts

    mutating func start(now: Instant) -> [Action] {
        switch state {
        case .stopped: beginConnecting(now: now)
        case .connecting, .settingUp, .idle, .busy, .broken: []
        }
    }

    mutating func stop(now: Instant) -> [Action] {
        let retry = retryAfterMs(now: now)
        var actions: [Action]
        switch state {
        case .stopped: return []
        case .broken: actions = []
        case .connecting, .idle: actions = [.close]
        case .settingUp(let setup, _): actions = Self.unavailable([setup], retryAfterMs: retry) + [.close]
        case .busy(let pipeline, _): actions = Self.unavailable(pipeline.all, retryAfterMs: retry) + [.close]
        }
        state = .stopped
        return actions + timer(now: now)
    }

    mutating func connectPolled(_ poll: ConnectPoll, now: Instant) -> [Action] {
        switch state {
        case .connecting(let deadline, let watching):
            // Said every time while connecting, even when unchanged: libpq may have moved to another socket (the
            // next address), and the driver watches afresh each time.
            switch poll {
            case .reading, .writing:
                let watch = Watch(readable: poll == .reading, writable: poll == .writing)
                state = .connecting(deadline: deadline, watching: watch)
                return [watch.action]
            case .failed:
                return fail(now: now, reason: "connect failed")
            case .ok:
                let watch = Watch.connected(outputPending: false)
                var actions: [Action] = [.enterPipelineMode]
                if watching != watch { actions.append(watch.action) }
                let request = PGPipelineRequest(id: internalID(), kind: .setup, statements: setup, transaction: false)
                state = .settingUp(InFlight(request, deadline: now + timing.requestTimeout), watching: watch)
                return actions + [.send(request)] + timer(now: now)
            }
        case .stopped, .settingUp, .idle, .busy, .broken:
            return []
        }
    }

    /// Whether libpq holds output not yet written (after a send, and after every `PQflush`): while it does, the
    /// socket is watched for writing too.
    mutating func flushed(outputPending pending: Bool) -> [Action] {
        let wanted = Watch.connected(outputPending: pending)
        switch state {
        case .settingUp(let setup, let watching):
            guard watching != wanted else { return [] }
            state = .settingUp(setup, watching: wanted)
        case .idle(let since, let watching):
            guard watching != wanted else { return [] }
            state = .idle(since: since, watching: wanted)
        case .busy(let pipeline, let watching):
            guard watching != wanted else { return [] }
            state = .busy(pipeline, watching: wanted)
        case .stopped, .connecting, .broken:
            return []
        }
        return [wanted.action]
    }

    /// One result read with `PQgetResult`, in pipeline order.
    mutating func received(_ outcome: LibPQ.Outcome, now: Instant) -> [Action] {
        switch state {
        case .stopped, .broken:
            // No connection: nothing can have been read.
            return []
        case .connecting, .idle:
            return fail(now: now, reason: "a result nobody asked for")
        case .settingUp(var setup, let watching):
            guard setup.take(outcome) else {
                state = .settingUp(setup, watching: watching)
                return []
            }
            if let failure = setup.failure { return fail(now: now, reason: "setup failed: \(failure.reason)") }
            consecutiveFailures = 0
            state = .idle(since: now, watching: watching)
            return [.ready] + timer(now: now)
        case .busy(let pipeline, let watching):
            let (rest, done) = pipeline.taking(outcome)
            // Whatever comes in is a sign of life: an idle connection's heartbeat is counted from the last of it.
            state = rest.map { .busy($0, watching: watching) } ?? .idle(since: now, watching: watching)
            guard let done else { return [] }
            switch done.request.kind {
            case .caller:
                return [.deliver(id: done.request.id, done.answer)] + timer(now: now)
            case .heartbeat, .setup:
                if let failure = done.failure { return fail(now: now, reason: "\(done.request.kind) failed: \(failure.reason)") }
                return timer(now: now)
            case .chore:
                return timer(now: now)
            }
        }
    }

    /// The connection failed (a read, a write or a send said so): every request in flight is answered
    /// `.unavailable`, none is retried (a write may have committed).
    mutating func failed(reason: String, now: Instant) -> [Action] {
        switch state {
        case .stopped, .broken: []
        case .connecting, .settingUp, .idle, .busy: fail(now: now, reason: reason)
        }
    }

    /// A request to send now; refused with `.unavailable` unless ready.
    mutating func enqueue(id: UInt64, statements: [PGStatement], transaction: Bool, now: Instant) -> [Action] {
        let request = PGPipelineRequest(id: id, kind: .caller, statements: statements, transaction: transaction)
        switch state {
        case .idle(_, let watching):
            return send(request, behind: nil, watching: watching, now: now)
        case .busy(let pipeline, let watching):
            return send(request, behind: pipeline, watching: watching, now: now)
        case .stopped, .connecting, .settingUp, .broken:
            return [.deliver(id: id, .failure(.unavailable(retryAfterMs: retryAfterMs(now: now))))]
        }
    }

    /// Work of the connection's own, answered to nobody (a released lease's ROLLBACK); dropped unless ready.
    mutating func enqueueChore(_ statements: [PGStatement], now: Instant) -> [Action] {
        switch state {
        case .idle(_, let watching):
            return send(PGPipelineRequest(id: internalID(), kind: .chore, statements: statements, transaction: false),
                        behind: nil, watching: watching, now: now)
        case .busy(let pipeline, let watching):
            return send(PGPipelineRequest(id: internalID(), kind: .chore, statements: statements, transaction: false),
                        behind: pipeline, watching: watching, now: now)
        case .stopped, .connecting, .settingUp, .broken:
            return []
        }
    }

    mutating func timerFired(now: Instant) -> [Action] {
        armedTimer = nil
        switch state {
        case .stopped:
            return []
        case .broken(let retryAt):
            guard now >= retryAt else { return timer(now: now) }
            return beginConnecting(now: now)
        case .connecting(let deadline, _):
            guard now >= deadline else { return timer(now: now) }
            return fail(now: now, reason: "connect timed out")
        case .settingUp(let setup, _):
            guard setup.deadline <= now else { return timer(now: now) }
            return [.stalled] + fail(now: now, reason: "no answer in time", expiredAt: now)
        case .idle(let since, let watching):
            guard now >= since + timing.heartbeat else { return timer(now: now) }
            let heartbeat = PGPipelineRequest(id: internalID(), kind: .heartbeat, statements: [PGStatement("SELECT 1")],
                                              transaction: false)
            return send(heartbeat, behind: nil, watching: watching, now: now)
        case .busy(let pipeline, _):
            guard pipeline.earliestDeadline <= now else { return timer(now: now) }
            return [.stalled] + fail(now: now, reason: "no answer in time", expiredAt: now)
        }
    }

    // MARK: Steps

    private mutating func beginConnecting(now: Instant) -> [Action] {
        state = .connecting(deadline: now + timing.connectTimeout, watching: nil)
        return [.connect] + timer(now: now)
    }

    /// Sends `request` on a ready connection, behind what is in flight (nil: nothing).
    private mutating func send(_ request: PGPipelineRequest, behind pipeline: Pipeline?, watching: Watch,
                               now: Instant) -> [Action] {
        let entry = InFlight(request, deadline: now + timing.requestTimeout)
        var next = pipeline ?? Pipeline(entry)
        if pipeline != nil { next.append(entry) }
        state = .busy(next, watching: watching)
        return [.send(request)] + timer(now: now)
    }

    /// Closes the connection after a failure: callers in flight get `.unavailable` (those past their deadline
    /// `.timeout`), and a reconnect is due after the backoff.
    private mutating func fail(now: Instant, reason: String, expiredAt: Instant? = nil) -> [Action] {
        let inFlight: [InFlight]
        switch state {
        case .settingUp(let setup, _): inFlight = [setup]
        case .busy(let pipeline, _): inFlight = pipeline.all
        case .stopped, .connecting, .idle, .broken: inFlight = []
        }
        let retryAt = now + backoff()
        consecutiveFailures += 1
        state = .broken(retryAt: retryAt)
        let retry = retryAfterMs(now: now)
        let answers: [Action] = inFlight.compactMap { entry in
            guard entry.request.kind == .caller else { return nil }
            let expired = expiredAt.map { entry.deadline <= $0 } ?? false
            return .deliver(id: entry.request.id, .failure(expired ? .timeout : .unavailable(retryAfterMs: retry)))
        }
        return answers + [.close, .broke(retryAt: retryAt, reason: reason)] + timer(now: now)
    }

    /// The callers among `entries`, each answered `.unavailable`.
    private static func unavailable(_ entries: [InFlight], retryAfterMs retry: Int64) -> [Action] {
        entries.compactMap { entry in
            guard entry.request.kind == .caller else { return nil }
            return .deliver(id: entry.request.id, .failure(.unavailable(retryAfterMs: retry)))
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

    private mutating func internalID() -> UInt64 {
        nextInternalID += 1
        return nextInternalID
    }

    /// The one instant the machine wants to hear from the timer next.
    private mutating func timer(now: Instant) -> [Action] {
        let wanted: Instant? = switch state {
        case .stopped: nil
        case .broken(let retryAt): retryAt
        case .connecting(let deadline, _): deadline
        case .settingUp(let setup, _): setup.deadline
        case .idle(let since, _): since + timing.heartbeat
        case .busy(let pipeline, _): pipeline.earliestDeadline
        }
        // A timer armed earlier than wanted is left to fire (it finds nothing due and sets the next): a busy
        // connection's earliest deadline moves on with every answer, and re-arming each time costs a syscall.
        switch (armedTimer, wanted) {
        case (nil, nil):
            return []
        case (let armed?, let wanted?) where armed <= wanted:
            return []
        case (_?, _?), (_?, nil), (nil, _?):
            armedTimer = wanted
            return [.setTimer(wanted)]
        }
    }
}

extension Duration {
    /// Whole milliseconds, rounded up, for `retry_after_ms`.
    var milliseconds: Int64 { (nanoseconds + 999_999) / 1_000_000 }
}
