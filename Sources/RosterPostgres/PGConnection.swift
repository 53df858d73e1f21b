import CLibPQ
import CLinux
import Glibc
import RosterCore
import RosterRuntime

/// One libpq connection driven by the loop: the driver of a `PGConnectionStateMachine`. Never blocks: it
/// connects with `PQconnectStartParams` / `PQconnectPoll`, sends in pipeline mode, flushes with EPOLLOUT armed
/// only while output is pending, and on readable consumes input and reads results while libpq is not busy.
/// Every fact goes through one `MachineDriver`, so a fact that comes up while actions run (a caller who sends
/// again from its completion, a send that fails) is stepped once the step under way has performed all of its
/// actions, in the order the machine gave them. Everything runs on the loop thread; every caller's completion
/// is called there, exactly once.
final class PGConnection {
    typealias Completion = (Result<[PGResult], PGFailure>) -> Void
    typealias Machine = PGConnectionStateMachine

    /// What the machine hears, as the driver queues it; the time is read when it is stepped.
    private enum Fact {
        case start
        case stop
        case connectPolled(Machine.ConnectPoll)
        case flushed(outputPending: Bool)
        case received(LibPQ.Outcome)
        case failed(reason: String)
        case enqueue(id: UInt64, statements: [PGStatement], transaction: Bool)
        case chore([PGStatement])
        case timerFired
    }

    private let conninfo: String
    private let loop: EventLoop
    private let logger: Logger
    private var machine: Machine
    private lazy var driver: MachineDriver<Fact, Machine.Action> = {
        let driver = MachineDriver<Fact, Machine.Action> { [unowned self] fact in self.step(fact) }
        driver.perform = { [unowned self] action, _ in self.perform(action) }
        return driver
    }()
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
    /// Requests and chores fed and not yet stepped: the pool counts them as in flight, as it would had they been
    /// sent at once, so that a caller sending from a completion cannot overfill the pipeline.
    private var queuedSends = 0

    /// Called once the connection is ready (after every connect).
    var onReady: (() -> Void)?
    /// Called when the connection broke (or a connect failed), with when it retries.
    var onBroken: ((_ retryAt: Instant, _ reason: String) -> Void)?
    /// Called when a request missed its deadline, before its caller is answered: the server stopped answering.
    var onStalled: (() -> Void)?
    /// Each notification read, for a listener.
    var onNotification: ((_ channel: String, _ payload: String) -> Void)?

    init(conninfo: String, loop: EventLoop, logger: Logger, timing: Machine.Timing, setup: [PGStatement]) {
        self.conninfo = conninfo
        self.loop = loop
        self.logger = logger
        machine = Machine(timing: timing, setup: setup, random: { Double.random(in: 0..<1) })
    }

    deinit {
        timer?.cancel()
        close()
    }

    var isReady: Bool { machine.isReady }
    /// Requests in flight, and those fed to be sent once the step under way is done.
    var inFlightCount: Int { machine.inFlightCount + queuedSends }
    func retryAfterMs() -> Int64 { machine.retryAfterMs(now: loop.now) }

    func start() { driver.feed(.start) }
    func stop() { driver.feed(.stop) }

    /// Sends `statements` (pipelined behind whatever is in flight); `completion` gets the answer.
    func execute(_ statements: [PGStatement], transaction: Bool, completion: @escaping Completion) {
        let id = nextID
        nextID += 1
        completions[id] = completion
        queuedSends += 1
        driver.feed(.enqueue(id: id, statements: statements, transaction: transaction))
    }

    /// Sends work nobody waits for (a released lease's ROLLBACK).
    func chore(_ statements: [PGStatement]) {
        queuedSends += 1
        driver.feed(.chore(statements))
    }

    /// Closes a ready connection as failed (its callers in flight answered `.unavailable`), to reconnect after the
    /// backoff: for a pool whose server stopped answering on another connection to the same server.
    func abandon(reason: String) {
        guard machine.isReady else { return }
        driver.feed(.failed(reason: reason))
    }

    /// The machine's one entry: each fact to its input, at the loop's time.
    private func step(_ fact: Fact) -> [Machine.Action] {
        let now = loop.now
        switch fact {
        case .start: return machine.start(now: now)
        case .stop: return machine.stop(now: now)
        case .connectPolled(let poll): return machine.connectPolled(poll, now: now)
        case .flushed(let pending): return machine.flushed(outputPending: pending)
        case .received(let outcome): return machine.received(outcome, now: now)
        case .failed(let reason): return machine.failed(reason: reason, now: now)
        case .enqueue(let id, let statements, let transaction):
            queuedSends -= 1
            return machine.enqueue(id: id, statements: statements, transaction: transaction, now: now)
        case .chore(let statements):
            queuedSends -= 1
            return machine.enqueueChore(statements, now: now)
        case .timerFired: return machine.timerFired(now: now)
        }
    }

    // MARK: Actions

    private func perform(_ action: Machine.Action) {
        switch action {
        case .connect:
            connect()
        case .enterPipelineMode:
            guard let connection, PQsetnonblocking(connection, 1) == 0, PQenterPipelineMode(connection) == 1 else {
                lose("cannot enter pipeline mode: \(LibPQ.errorMessage(connection))")
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
                    self.driver.feed(.timerFired)
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

    /// An I/O call failed: libpq's connection is given up at once, so that the rest of the step under way sends
    /// nothing more on it, and the machine hears of the failure next (and answers what was in flight).
    private func lose(_ reason: String) {
        close()
        driver.feed(.failed(reason: reason))
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
            driver.feed(.connectPolled(.failed))
            return
        }
        LibPQ.silenceNotices(started)
        // libpq's own rule: after PQconnectStart, wait until the socket is writable, then poll.
        driver.feed(.connectPolled(.writing))
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
            lose("no socket")
            return
        }
        let events = (readable ? EPOLLIN.rawValue : 0) | (writable ? EPOLLOUT.rawValue : 0)
        // While connecting, libpq may close its socket and open another (the next host, a retry without SSL),
        // even under the same number: watch afresh each time then (and through the setup), and only modify once ready.
        if let registration, fd == sourceFD, machine.phase != .connecting, machine.phase != .settingUp {
            do { try loop.modify(registration, events: events) } catch {
                lose("epoll: \(error)")
            }
            return
        }
        unwatch()
        let copy = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else {
            lose("dup: errno \(errno)")
            return
        }
        watchedFD = copy
        sourceFD = fd
        do {
            registration = try loop.register(fd: copy, events: events) { [weak self] events in self?.handle(events) }
        } catch {
            lose("epoll: \(error)")
        }
    }

    private func handle(_ events: UInt32) {
        guard let connection else { return }
        if machine.phase == .connecting {
            let poll: Machine.ConnectPoll = switch PQconnectPoll(connection) {
            case PGRES_POLLING_OK: .ok
            case PGRES_POLLING_READING: .reading
            case PGRES_POLLING_WRITING: .writing
            default: .failed
            }
            if poll == .failed { logger.info("PostgreSQL connect failed", [("error", LibPQ.errorMessage(connection))]) }
            driver.feed(.connectPolled(poll))
            return
        }
        if events & (EPOLLIN.rawValue | EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 {
            guard PQconsumeInput(connection) == 1 else {
                lose(LibPQ.errorMessage(connection))
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
                lose(LibPQ.errorMessage(connection))
                return
            }
            let endsSegment = !request.transaction || index == request.statements.count - 1
            if endsSegment && PQpipelineSync(connection) != 1 {
                lose(LibPQ.errorMessage(connection))
                return
            }
        }
        if request.statements.isEmpty && PQpipelineSync(connection) != 1 {
            lose(LibPQ.errorMessage(connection))
            return
        }
        // Not flushed here: with EPOLLOUT armed the loop comes back at once (the socket is writable), and every
        // request sent in this turn of the loop goes out in one write instead of one write each.
        driver.feed(.flushed(outputPending: true))
    }

    private func flush(_ connection: OpaquePointer) {
        switch PQflush(connection) {
        case 0: driver.feed(.flushed(outputPending: false))
        case 1: driver.feed(.flushed(outputPending: true))
        default: lose(LibPQ.errorMessage(connection))
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
            driver.feed(.received(LibPQ.outcome(of: result)))
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
