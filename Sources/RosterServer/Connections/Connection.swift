import CLinux
import Glibc
import RosterCore
import RosterRuntime
import RosterProtocol

/// One client socket: the system calls of a connection whose rules are `ConnectionMachine`'s. It reads into the
/// line framer, writes its `OutputQueue` with `writev`, asks the loop for readiness and timers, and tells the
/// machine what happened; the machine says what to do next (see its rules for reading, back-pressure, half-close
/// and closing).
///
/// It runs the machine with `MachineDriver`'s rule, one fact at a time, and a fact fed while actions are being
/// performed (an answer queued by the line being served, a write's result) waits until they all are. The driver
/// is its own rather than `MachineDriver` because a step runs several times per line: an array of actions, or a
/// closure, per step would be allocations per line on the daemon's hottest path.
final class Connection {
    let id: UInt64
    let fd: Int32
    let peer: PeerCredentials
    let session: Session
    /// Set when the connection closes, for work queued on its behalf to skip itself on a worker.
    let closedFlag = Locked(false)
    /// The server owns its connections; a strong reference back would be a cycle that kept a server alive
    /// through every connection still open when it goes.
    private unowned let environment: any ConnectionEnvironment
    private let loop: any EventLoopProtocol
    private let readBuffer: UnsafeMutableBufferPointer<UInt8>
    private var registration: LoopRegistration?
    private var framer: LineFramer
    /// What every connection's unfinished long lines hold together, and this one's share of it.
    private let heldLines: HeldLineBytes
    private var heldLineCharge = 0
    private var output = OutputQueue()
    private var machine: ConnectionMachine
    /// Facts fed while a step's actions were being performed, oldest first.
    private var facts = FactQueue()
    private var isStepping = false
    /// The server settings in force, kept here so that a send need not reach the server (the server's reference
    /// count lives in a side table, so every touch of it is slow); a reload updates them.
    var settings: ServerSettings {
        didSet { feed(.limitsChanged(ConnectionMachine.Limits(settings))) }
    }

    init(id: UInt64, fd: Int32, peer: PeerCredentials, session: Session, maxLineBytes: Int, settings: ServerSettings,
         environment: any ConnectionEnvironment, heldLines: HeldLineBytes = HeldLineBytes()) {
        self.heldLines = heldLines
        self.id = id
        self.fd = fd
        self.peer = peer
        self.session = session
        self.framer = LineFramer(maxLineBytes: maxLineBytes)
        self.environment = environment
        self.loop = environment.eventLoop
        self.readBuffer = environment.readBuffer
        self.settings = settings
        self.machine = ConnectionMachine(limits: ConnectionMachine.Limits(settings))
    }

    var isClosed: Bool { machine.isClosed }

    /// Whether reading is stopped by back-pressure.
    var isReadPaused: Bool { machine.isReadPaused }

    /// The socket refused output since the queue was last empty: the peer is not keeping up.
    var peerIsBehind: Bool { machine.peerIsBehind }

    /// Requests read and not yet answered; a half-closed peer waits for these.
    var inFlight: Int { machine.inFlight }

    /// Bytes queued that the peer has not read yet.
    var unsentBytes: Int { output.byteCount }

    func start() throws(SystemError) {
        registration = try loop.register(fd: fd, events: machine.interest) { [unowned self] events in
            self.handle(events)
        }
    }

    // MARK: What the server and the calls tell the connection

    /// Queues an event; `coalescing` names what it is the latest state of, so a peer that does not read gets only
    /// the newest one. A peer that lets events pile up past the hard limit is cut off.
    func sendEvent(_ bytes: [UInt8], coalescing key: OutputQueue.CoalesceKey? = nil) {
        guard !isClosed else { return }
        output.append(bytes, coalescing: key)
        feed(.queued(event: true, outputBytes: output.byteCount))
    }

    /// Queues the answer to request `id`; one the connection cannot hold becomes an `answer_too_large` error for
    /// that id, so a client always learns what happened to its request.
    func sendAnswer(_ bytes: [UInt8], id: JSONValue) {
        guard !isClosed else { return }
        let limit = min(settings.maxAnswerBytes, max(0, settings.outputHardLimitBytes - output.byteCount))
        guard bytes.count <= limit else {
            let environment = self.environment
            environment.logger.warning("an answer of \(bytes.count) bytes exceeds the \(limit) this connection may "
                                       + "hold; answering answer_too_large", [("ROSTER_CONNECTION", String(self.id))])
            environment.sendError(.answerTooLarge(size: bytes.count, limit: limit), id: id, to: self)
            return
        }
        sendReply(bytes)
    }

    /// Queues an answer or an error known to be small.
    func sendReply(_ bytes: [UInt8]) {
        guard !isClosed else { return }
        output.append(bytes)
        feed(.queued(event: false, outputBytes: output.byteCount))
    }

    /// Queues a line that `build` appends to the output in place (see `OutputQueue.appendPlain`).
    func sendLine(_ build: (inout [UInt8]) -> Void) {
        guard !isClosed else { return }
        output.appendPlain(build)
        feed(.queued(event: false, outputBytes: output.byteCount))
    }

    /// A request was read (or held) and is owed an answer.
    func requestStarted() {
        feed(.requestStarted)
    }

    /// Called when an answer goes out; a draining connection may now be done, a paused one read again.
    func requestFinished() {
        feed(.requestFinished)
    }

    /// `ConnectionEnvironment.outputDrained` is called once every byte queued now (and later) is written.
    func notifyWhenDrained() {
        feed(.notifyWhenDrained)
    }

    /// Counts `bytes` of an answer that a worker is building as if they were queued already.
    func reserveOutput(_ bytes: Int) {
        feed(.outputReserved(bytes))
    }

    /// The answer reserved for is here (or will never come).
    func releaseOutput(_ bytes: Int) {
        feed(.outputReleased(bytes))
    }

    /// Stops reading new requests (shutdown); pending answers still go out, and lines already read but held (see
    /// `ReadGate`) are still served: the peer sent them before the daemon stopped.
    func stopReading() {
        feed(.stopReading)
    }

    func close() {
        feed(.close)
    }

    // MARK: The socket

    private func handle(_ events: UInt32) {
        if events & EPOLLOUT.rawValue != 0 { feed(.writable) }
        if !isClosed, events & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLHUP.rawValue) != 0, machine.isReading {
            readAvailable()
        }
        if events & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 {
            feed(.hungUp(error: events & EPOLLERR.rawValue != 0))
        }
    }

    private func readAvailable() {
        // One strong reference for the whole wake-up, not one per line.
        let environment = self.environment
        let buffer = readBuffer
        let borrowed = UnsafeBufferPointer(buffer)
        var outputs: [LineFramer.Output] = []
        // A pipelining peer sends dozens of lines a read; growing from empty cost six allocations a wake-up.
        outputs.reserveCapacity(64)
        var lineEnded = false
        feed(.readingBegan, environment)
        // A bounded number of reads per wake-up keeps one chatty peer from starving the rest.
        for _ in 0..<4 {
            let result = Result(catching: { () throws(SystemError) -> IOResult<Int> in
                try Syscall.nonBlocking("read") { read(fd, buffer.baseAddress, buffer.count) }
            })
            var filled = false
            switch result {
            case .success(.done(0)):
                framer.finish(into: &outputs)
                feed(.endOfStream, environment)
            case .success(.done(let count)):
                // A logged-in session may send longer lines (a card with a photo); before log-in they stay short.
                framer.maxLineBytes = session.user == nil ? settings.maxLineBytes
                    : max(settings.maxLineBytes, settings.maxSessionLineBytes)
                framer.feedBorrowing(UnsafeRawBufferPointer(start: buffer.baseAddress, count: count), into: &outputs)
                chargeHeldLine(environment)
                filled = count == buffer.count
            case .success(.wouldBlock):
                break
            case .failure(let error):
                feed(.readFailed(errno: error.errno), environment)
                return
            }
            // Spans point into the shared buffer, so this read's lines are served (or copied) before the next read.
            lineEnded = lineEnded || !outputs.isEmpty
            for line in outputs { serveOrHold(line, from: borrowed, environment) }
            outputs.removeAll(keepingCapacity: true)
            // A read that did not fill the buffer took everything there was; the level-triggered loop wakes us
            // again for more, so asking now would only cost a read that says EAGAIN.
            if isClosed || !machine.isReading || !filled { break }
        }
        feed(.readEnded(lineEnded: lineEnded, partialLine: framer.hasPartialLine), environment)
    }

    private func flush(then: ConnectionMachine.AfterWrite) {
        var blocked = false
        writing: while !output.isEmpty {
            do {
                switch try output.write(to: fd) {
                case .done: continue
                case .wouldBlock: blocked = true; break writing
                }
            } catch {
                return feed(.wrote(.failed(errno: error.errno), outputBytes: output.byteCount, then: then))
            }
        }
        feed(.wrote(blocked ? .blocked : .wroteAll, outputBytes: output.byteCount, then: then))
    }

    private func setInterest(_ events: UInt32) {
        guard let registration else { return }
        do {
            try loop.modify(registration, events: events)
        } catch {
            feed(.interestFailed(errno: error.errno))
        }
    }

    private func schedule(_ timer: ConnectionMachine.Timer) {
        let deadline = switch timer {
        case .heldLines: loop.now
        case .unfinishedLine(let since, let timeout): since + timeout
        case .congestion(let since, let stall): since + stall
        }
        loop.schedule(at: deadline) { [weak self] in self?.feed(.timerFired(timer)) }
    }

    /// Charges the part of the unfinished line beyond `MaxLineBytes=` to the budget all connections share; a line
    /// the budget cannot hold is dropped and answered `busy` (the peer may send it again), so that many peers
    /// each sending a big line slowly cannot hold the daemon's memory, and none of them waits on another.
    private func chargeHeldLine(_ environment: any ConnectionEnvironment) {
        let over = max(0, framer.bufferedByteCount - settings.maxLineBytes)
        let delta = over - heldLineCharge
        if delta > 0, heldLines.bytes + delta > settings.maxHeldLineBytes {
            heldLines.bytes -= heldLineCharge
            heldLineCharge = 0
            framer.dropPartialLine()
            environment.sendError(.busy(retryAfterMs: HeldLineBytes.retryAfterMs), id: .null, to: self)
            return
        }
        heldLines.bytes += delta
        heldLineCharge = over
    }

    private func close(because reason: ConnectionMachine.CloseReason, _ environment: any ConnectionEnvironment) {
        heldLines.bytes -= heldLineCharge
        heldLineCharge = 0
        log(closing: reason, environment.logger)
        closedFlag.withLock { $0 = true }
        if let registration { loop.deregister(registration) }
        registration = nil
        Glibc.close(fd)
        // Calls still running on workers keep this object alive; what it held for the peer is freed now.
        output = OutputQueue()
        environment.connectionClosed(self)
    }

    private func log(closing reason: ConnectionMachine.CloseReason, _ logger: Logger) {
        let fields = [("ROSTER_CONNECTION", String(id))]
        switch reason {
        case .drained, .requested, .peerGone, .readFailed, .writeFailed:
            break
        case .unfinishedLine(let timeout):
            logger.notice("closing a connection that left a line unfinished for \(timeout)", fields)
        case .outputOverHardLimit(let bytes, let limit):
            logger.warning("closing a connection whose peer left \(bytes) bytes unread, past "
                           + "OutputHardLimitBytes=\(limit); it was not reading them", fields)
        case .stalled(let bytes, let stall):
            logger.warning("closing a connection that has not read its \(bytes) unread bytes for \(stall)", fields)
        case .interestFailed(let errno):
            let error = SystemError(errno: errno, call: "epoll_ctl(MOD)")
            logger.warning("closing a connection whose socket the loop can no longer watch: \(error)", fields)
        }
    }

    // MARK: Driving the machine

    private func feed(_ fact: ConnectionMachine.Fact) {
        guard !isStepping else { return enqueue(fact) }
        run(fact, environment)
    }

    private func feed(_ fact: ConnectionMachine.Fact, _ environment: any ConnectionEnvironment) {
        guard !isStepping else { return enqueue(fact) }
        run(fact, environment)
    }

    /// A fact fed while actions are performed: it waits for them, unless none waits before it and the machine
    /// can apply it without a step (see `ConnectionMachine.applyWithoutStep`).
    private func enqueue(_ fact: ConnectionMachine.Fact) {
        if facts.isEmpty && machine.applyWithoutStep(fact) { return }
        facts.append(fact)
    }

    /// Steps `first`, performs its actions, then steps and performs every fact they fed, in order.
    private func run(_ first: ConnectionMachine.Fact, _ environment: any ConnectionEnvironment) {
        isStepping = true
        defer { isStepping = false }
        perform(machine.step(first, self), environment)
        performQueuedFacts(environment)
    }

    /// `run` for a line just read: it comes only from the top of the loop, never while actions are performed.
    private func serveOrHold(_ line: LineFramer.Output, from buffer: UnsafeBufferPointer<UInt8>,
                             _ environment: any ConnectionEnvironment) {
        assert(!isStepping, "a line is read only at the top of the loop")
        isStepping = true
        defer { isStepping = false }
        if machine.servesLineNow(self) {
            serve(line, environment)
        } else {
            perform(machine.holdLine(line, from: buffer, self), environment)
        }
        performQueuedFacts(environment)
    }

    private func performQueuedFacts(_ environment: any ConnectionEnvironment) {
        while let fact = facts.popFirst() {
            perform(machine.step(fact, self), environment)
        }
    }

    private func perform(_ actions: ConnectionActions, _ environment: any ConnectionEnvironment) {
        for index in 0..<actions.count {
            switch actions[index] {
            case .beginTurn: output.beginBatch()
            case .serve(let line): serve(line, environment)
            case .serveHeld(let line):
                serve(line, environment)
                enqueue(.heldLineServed)
            case .endTurn(let then):
                output.endBatch()
                flush(then: then)
            case .flush(let then): flush(then: then)
            case .setInterest(let events): setInterest(events)
            case .schedule(let timer): schedule(timer)
            case .accountOutput(let delta): environment.outputQueuedChanged(uid: peer.uid, by: delta)
            case .notifyDrained: environment.outputDrained(self)
            case .close(let reason): close(because: reason, environment)
            }
        }
    }

    private func serve(_ line: LineFramer.Output, _ environment: any ConnectionEnvironment) {
        switch line {
        case .span(let range): environment.dispatch(line: UnsafeBufferPointer(rebasing: readBuffer[range]), from: self)
        case .line(let bytes): bytes.withUnsafeBufferPointer { environment.dispatch(line: $0, from: self) }
        case .tooLarge: environment.rejectOversizedLine(from: self)
        }
    }
}

/// What the machine asks while it steps, answered by the loop and the environment. The connection answers
/// itself, so that a step costs no reference counting for it.
extension Connection: ConnectionQueries {
    var clockNow: Instant { loop.now }
    var outputBudgetSpent: Bool { environment.isOutputBudgetSpent(uid: peer.uid) }
    var daemonIsStopping: Bool { environment.isStopping }
}

/// Facts waiting for the step under way: the usual one fact per line (its answer queued) waits in a slot of
/// its own, which costs no array access; more spill into a ring, which costs no array reshuffling.
private struct FactQueue {
    /// The oldest waiting fact, when it is not in the ring; the ring's facts are all younger.
    private var next: ConnectionMachine.Fact?
    private var slots: [ConnectionMachine.Fact] = []
    private var head = 0
    private var count = 0

    mutating func append(_ fact: ConnectionMachine.Fact) {
        if next == nil && count == 0 {
            next = fact
            return
        }
        if count == slots.count { grow() }
        slots[(head + count) % slots.count] = fact
        count += 1
    }

    var isEmpty: Bool { next == nil && count == 0 }

    mutating func popFirst() -> ConnectionMachine.Fact? {
        if let fact = next {
            next = nil
            return fact
        }
        guard count > 0 else { return nil }
        let fact = slots[head]
        // What the fact held (a copied line) is not kept until the slot is reused.
        slots[head] = .writable
        head = (head + 1) % slots.count
        count -= 1
        return fact
    }

    private mutating func grow() {
        var grown: [ConnectionMachine.Fact] = []
        grown.reserveCapacity(max(4, slots.count * 2))
        for offset in 0..<count { grown.append(slots[(head + offset) % slots.count]) }
        while grown.count < grown.capacity { grown.append(.writable) }
        slots = grown
        head = 0
    }
}

/// A connection answers its calls itself; what only the server knows (the policy an error is worded under, the
/// counters, the requests held behind a log-in) it asks its environment for.
extension Connection: CallHost {
    func sendError(_ error: RosterError, id: JSONValue) {
        environment.sendError(error, id: id, to: self)
    }

    func requestAnswered() {
        environment.requestAnswered()
    }

    func authChangeEnded() {
        environment.authChangeEnded(on: self)
    }
}

/// The bytes all of a loop's connections hold in unfinished lines beyond `[Server] MaxLineBytes=`; only the loop's
/// thread touches it.
final class HeldLineBytes {
    /// The `retry_after_ms` of a line refused because the budget was full.
    static let retryAfterMs: Int64 = 1_000
    var bytes = 0
}
