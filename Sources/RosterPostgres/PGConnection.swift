import CLibPQ
import CLinux
import Glibc
import RosterCore
import RosterRuntime

/// One libpq connection driven by the loop: the driver of a `PGConnectionStateMachine`. Never blocks: it
/// connects with `PQconnectStartParams` / `PQconnectPoll`, sends in pipeline mode, flushes with EPOLLOUT armed
/// only while output is pending, and on readable consumes input and reads results while libpq is not busy.
/// Everything runs on the loop thread; every caller's completion is called there, exactly once.
final class PGConnection {
    typealias Completion = (Result<[PGResult], PGFailure>) -> Void

    private let conninfo: String
    private let loop: EventLoop
    private let logger: Logger
    private var machine: PGConnectionStateMachine
    private var connection: OpaquePointer?
    private var registration: EventLoop.RegistrationID?
    /// The loop watches a duplicate of libpq's socket, never libpq's own: libpq closes its socket when it finds
    /// the connection lost (and while connecting, to try again), and a registration must be removed before its
    /// fd closes, or a reused number would be removed instead. The duplicate closes only after deregistering.
    private var watchedFD: Int32 = -1
    /// libpq's socket that `watchedFD` duplicates.
    private var sourceFD: Int32 = -1
    private var timer: Scheduled?
    private var completions: [UInt64: Completion] = [:]
    private var nextID: UInt64 = 1

    /// Called once the connection is ready (after every connect).
    var onReady: (() -> Void)?
    /// Called when the connection broke (or a connect failed), with when it retries.
    var onBroken: ((_ retryAt: Instant, _ reason: String) -> Void)?
    /// Called when a request missed its deadline, before its caller is answered: the server stopped answering.
    var onStalled: (() -> Void)?
    /// Each notification read, for a listener.
    var onNotification: ((_ channel: String, _ payload: String) -> Void)?

    init(conninfo: String, loop: EventLoop, logger: Logger, timing: PGConnectionStateMachine.Timing,
         setup: [PGStatement]) {
        self.conninfo = conninfo
        self.loop = loop
        self.logger = logger
        machine = PGConnectionStateMachine(timing: timing, setup: setup, random: { Double.random(in: 0..<1) })
    }

    deinit {
        timer?.cancel()
        close()
    }

    var isReady: Bool { machine.isReady }
    var inFlightCount: Int { machine.inFlightCount }
    var state: PGConnectionStateMachine.State { machine.state }
    func retryAfterMs() -> Int64 { machine.retryAfterMs(now: loop.now) }

    func start() { apply(machine.start(now: loop.now)) }
    func stop() { apply(machine.stop(now: loop.now)) }

    /// Sends `statements` now (pipelined behind whatever is in flight); `completion` gets the answer.
    func execute(_ statements: [PGStatement], transaction: Bool, completion: @escaping Completion) {
        let id = nextID
        nextID += 1
        completions[id] = completion
        apply(machine.enqueue(id: id, statements: statements, transaction: transaction, now: loop.now))
    }

    /// Sends work nobody waits for (a released lease's ROLLBACK).
    func chore(_ statements: [PGStatement]) { apply(machine.enqueueChore(statements, now: loop.now)) }

    /// Closes a ready connection as failed (its callers in flight answered `.unavailable`), to reconnect after the
    /// backoff: for a pool whose server stopped answering on another connection to the same server.
    func abandon(reason: String) {
        guard machine.isReady else { return }
        apply(machine.failed(reason: reason, now: loop.now))
    }

    // MARK: Actions

    /// The timer first: a delivery may run a caller who sends again, and the machine's newer timer from that
    /// nested call must not be overwritten by this older one afterwards.
    private func apply(_ actions: [PGConnectionStateMachine.Action]) {
        for case .setTimer(let deadline) in actions { perform(.setTimer(deadline)) }
        for action in actions {
            if case .setTimer = action { continue }
            perform(action)
        }
    }

    private func perform(_ action: PGConnectionStateMachine.Action) {
        switch action {
        case .connect:
            connect()
        case .enterPipelineMode:
            guard let connection, PQsetnonblocking(connection, 1) == 0, PQenterPipelineMode(connection) == 1 else {
                apply(machine.failed(reason: "cannot enter pipeline mode: \(LibPQ.errorMessage(connection))", now: loop.now))
                return
            }
        case .watch(let readable, let writable):
            watch(readable: readable, writable: writable)
        case .send(let request):
            send(request)
        case .deliver(let id, let result):
            completions.removeValue(forKey: id)?(result)
        case .close:
            close()
        case .setTimer(let deadline):
            timer?.cancel()
            timer = deadline.map { deadline in
                loop.schedule(at: deadline) { [weak self] in
                    guard let self else { return }
                    self.timer = nil
                    self.apply(self.machine.timerFired(now: self.loop.now))
                }
            }
        case .ready:
            onReady?()
        case .broke(let retryAt, let reason):
            // The first failure is news; the retries that fail after it are not.
            // (at debug, so that an outage of an hour is not a line every two seconds per connection)
            let level: LogLevel = machine.consecutiveFailures > 1 ? .debug : .warning
            logger.log(level, "PostgreSQL connection lost", [("reason", reason),
                                                             ("retry_in_ms", "\((retryAt - loop.now).milliseconds)")])
            onBroken?(retryAt, reason)
        case .stalled:
            onStalled?()
        }
    }

    private func connect() {
        close()
        let keywords = ["dbname", "fallback_application_name"]
        let values = [conninfo, "rosterd"]
        let started: OpaquePointer? = LibPQ.withCStrings(keywords) { keywords in
            LibPQ.withCStrings(values) { values in PQconnectStartParams(keywords, values, 1) }
        }
        connection = started
        guard let started, PQstatus(started) != CONNECTION_BAD else {
            apply(machine.connectPolled(.failed, now: loop.now))
            return
        }
        LibPQ.silenceNotices(started)
        // libpq's own rule: after PQconnectStart, wait until the socket is writable, then poll.
        apply(machine.connectPolled(.writing, now: loop.now))
    }

    private func close() {
        unwatch()
        if let connection { PQfinish(connection) }
        connection = nil
    }

    private func unwatch() {
        if let registration { loop.deregister(registration) }
        registration = nil
        if watchedFD >= 0 { Glibc.close(watchedFD) }
        watchedFD = -1
        sourceFD = -1
    }

    private func watch(readable: Bool, writable: Bool) {
        guard let connection else { return }
        let fd = PQsocket(connection)
        guard fd >= 0 else {
            apply(machine.failed(reason: "no socket", now: loop.now))
            return
        }
        let events = (readable ? EPOLLIN.rawValue : 0) | (writable ? EPOLLOUT.rawValue : 0)
        // While connecting, libpq may close its socket and open another (the next host, a retry without SSL),
        // even under the same number: watch afresh each time then, and only modify once connected.
        if let registration, fd == sourceFD, machine.state != .connecting {
            do { try loop.modify(registration, events: events) } catch {
                apply(machine.failed(reason: "epoll: \(error)", now: loop.now))
            }
            return
        }
        unwatch()
        let copy = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else {
            apply(machine.failed(reason: "dup: errno \(errno)", now: loop.now))
            return
        }
        watchedFD = copy
        sourceFD = fd
        do {
            registration = try loop.register(fd: copy, events: events) { [weak self] events in self?.handle(events) }
        } catch {
            apply(machine.failed(reason: "epoll: \(error)", now: loop.now))
        }
    }

    private func handle(_ events: UInt32) {
        guard let connection else { return }
        if machine.state == .connecting && machine.inFlightCount == 0 {
            let poll: PGConnectionStateMachine.ConnectPoll = switch PQconnectPoll(connection) {
            case PGRES_POLLING_OK: .ok
            case PGRES_POLLING_READING: .reading
            case PGRES_POLLING_WRITING: .writing
            default: .failed
            }
            if poll == .failed { logger.info("PostgreSQL connect failed", [("error", LibPQ.errorMessage(connection))]) }
            apply(machine.connectPolled(poll, now: loop.now))
            return
        }
        if events & (EPOLLIN.rawValue | EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 {
            guard PQconsumeInput(connection) == 1 else {
                apply(machine.failed(reason: LibPQ.errorMessage(connection), now: loop.now))
                return
            }
            readResults(connection)
            deliverNotifications(connection)
        }
        guard self.connection == connection else { return }
        flush(connection)
    }

    private func send(_ request: PGPipelineRequest) {
        guard let connection else { return }
        for (index, statement) in request.statements.enumerated() {
            let sent = LibPQ.withParameters(statement.params) { count, types, values, lengths, formats in
                PQsendQueryParams(connection, statement.sql, count, types, values, lengths, formats, 0)
            }
            guard sent == 1 else {
                apply(machine.failed(reason: LibPQ.errorMessage(connection), now: loop.now))
                return
            }
            let endsSegment = !request.transaction || index == request.statements.count - 1
            if endsSegment && PQpipelineSync(connection) != 1 {
                apply(machine.failed(reason: LibPQ.errorMessage(connection), now: loop.now))
                return
            }
        }
        if request.statements.isEmpty && PQpipelineSync(connection) != 1 {
            apply(machine.failed(reason: LibPQ.errorMessage(connection), now: loop.now))
            return
        }
        // Not flushed here: with EPOLLOUT armed the loop comes back at once (the socket is writable), and every
        // request sent in this turn of the loop goes out in one write instead of one write each.
        apply(machine.flushed(outputPending: true))
    }

    private func flush(_ connection: OpaquePointer) {
        switch PQflush(connection) {
        case 0: apply(machine.flushed(outputPending: false))
        case 1: apply(machine.flushed(outputPending: true))
        default: apply(machine.failed(reason: LibPQ.errorMessage(connection), now: loop.now))
        }
    }

    /// Every result libpq has whole. A NULL ends one statement's results, so one NULL is passed over; two in a
    /// row mean nothing more is buffered. Data already buffered raises no new epoll event, so nothing may be
    /// left unread here.
    private func readResults(_ connection: OpaquePointer) {
        var nulls = 0
        while self.connection == connection, PQisBusy(connection) == 0 {
            guard let result = PQgetResult(connection) else {
                nulls += 1
                if nulls >= 2 || machine.inFlightCount == 0 { return }
                continue
            }
            nulls = 0
            apply(machine.received(LibPQ.outcome(of: result), now: loop.now))
        }
    }

    private func deliverNotifications(_ connection: OpaquePointer) {
        while self.connection == connection, let notify = PQnotifies(connection) {
            let channel = String(cString: notify.pointee.relname)
            let payload = notify.pointee.extra.map { String(cString: $0) } ?? ""
            PQfreemem(notify)
            onNotification?(channel, payload)
        }
    }
}
