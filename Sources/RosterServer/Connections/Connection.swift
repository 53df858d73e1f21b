import CLinux
import Glibc
import RosterCore
import RosterRuntime
import RosterProtocol

/// One client socket: non-blocking reads into the line framer, buffered writes, back-pressure and half-close.
///
/// Lifecycle: reading → (peer shuts its write side) draining → closed. While draining, requests already
/// read are still answered; the socket closes once none is in flight and every byte is written.
///
/// Back-pressure (see `ReadGate`): while the peer leaves too much output unread, or too many of its requests are
/// in flight, or the output budget is spent, its requests are not read. Lines already read when the gate closes
/// wait here, unserved, and go first when it opens; meanwhile the connection is not "idle mid-line" by its own
/// fault, so the unfinished-line timer does not run.
final class Connection {
    let id: UInt64
    let fd: Int32
    let peer: PeerCredentials
    let session: Session
    private(set) var isClosed = false
    /// Set when the connection closes, for work queued on its behalf to skip itself on a worker.
    let closedFlag = Locked(false)
    private var registration: EventLoop.RegistrationID?
    /// The events asked of epoll now.
    private var interest = EPOLLIN.rawValue | EPOLLRDHUP.rawValue
    private var framer: LineFramer
    private var output = OutputQueue()
    /// Bytes promised to answers being built off the loop (a big page, an export page): the gate and the budget
    /// count them as output already, so a peer cannot start more of them than it may hold.
    private var reserved = 0
    /// The part of `output` and `reserved` counted in the server's output budget.
    private var budgeted = 0
    private var gate = ReadGate()
    private var gateLimits: ReadGate.Limits
    /// Lines read but not served because the gate closed in the middle of a read (never `.span`s).
    private var heldLines: [LineFramer.Output] = []
    private var heldHead = 0
    /// When the unfinished line now buffered began; a peer may not sit on half a request forever.
    private var partialLineSince: Instant?
    /// When the output first stayed above the soft limit; cleared once it drains below.
    private var congestedSince: Instant?
    private var readShutDown = false
    private var isDispatching = false
    private var heldLinesScheduled = false
    /// Lines served in this turn of the loop, and the output queued when it began (see `linesPerTurn`).
    private var servedThisTurn = 0
    private var outputAtTurnStart = 0
    private unowned let server: Server
    /// Requests read and not yet answered; a half-closed peer waits for these.
    var inFlight = 0
    /// The socket refused output since the queue was last empty: the peer is not keeping up.
    private(set) var peerIsBehind = false
    /// Someone waits to hear (`Server.outputDrained`) once the queue is empty, even if the socket never refused.
    private var drainWatched = false
    /// The server settings in force, kept here so that a send need not reach the server (issue 8: the server's
    /// reference count lives in a side table, so every touch of it was slow); a reload updates them.
    var settings: ServerSettings {
        didSet { gateLimits = Self.gateLimits(settings) }
    }

    init(id: UInt64, fd: Int32, peer: PeerCredentials, session: Session, maxLineBytes: Int, server: Server) {
        self.id = id
        self.fd = fd
        self.peer = peer
        self.session = session
        self.framer = LineFramer(maxLineBytes: maxLineBytes)
        self.server = server
        self.settings = server.config.server
        self.gateLimits = Self.gateLimits(server.config.server)
    }

    /// A connection serves at most this many lines per turn of the loop, or lines until their answers passed
    /// `bytesPerTurn`, then yields: 150 peers each pipelining thousands of requests made a fresh connection's
    /// `session.whoami` wait for all of theirs (issue 12). Bytes stand in for the work: one `contacts.list` of
    /// 1,000 costs as much as thousands of `session.whoami`.
    static let linesPerTurn = 128
    static let bytesPerTurn = 128 << 10

    private static func gateLimits(_ settings: ServerSettings) -> ReadGate.Limits {
        ReadGate.Limits(pauseBytes: settings.readPauseBytes, resumeBytes: settings.readResumeBytes,
                        maxInFlight: settings.maxRequestsInFlight)
    }

    /// Whether reading is stopped by back-pressure.
    var isReadPaused: Bool { gate.isPaused }

    func start(on loop: EventLoop) throws(SystemError) {
        registration = try loop.register(fd: fd, events: interest) { [unowned self] events in
            self.handle(events)
        }
    }

    private func handle(_ events: UInt32) {
        if events & EPOLLOUT.rawValue != 0 { flush() }
        if !isClosed, events & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLHUP.rawValue) != 0, isReading {
            readAvailable()
        }
        // EPOLLHUP means the peer closed both ways: nobody is left to read what is still owed (and a connection
        // that is not being read would see the hang-up again on every turn of the loop).
        let gone = events & EPOLLERR.rawValue != 0 || (events & EPOLLHUP.rawValue != 0 && !isReading)
        if !isClosed, gone { close() }
    }

    /// Whether new bytes are taken from the socket: not after end of stream, not while the gate is closed, and not
    /// before the lines held from earlier reads are served (they come first).
    private var isReading: Bool { !readShutDown && !gate.isPaused && !hasHeldLines }

    private func readAvailable() {
        let server = self.server
        let buffer = server.readBuffer
        var outputs: [LineFramer.Output] = []
        // A pipelining peer sends dozens of lines a read; growing from empty cost six allocations a wake-up.
        outputs.reserveCapacity(64)
        var lineEnded = false
        beginTurn()
        isDispatching = true
        output.beginBatch()
        defer {
            isDispatching = false
            output.endBatch()
            // The answers to every line of this wake-up leave in one writev (issue 8: one syscall per answer
            // was a tenth of the daemon's time under pipelining).
            if !isClosed { flush() }
            if readShutDown { readSideClosed() }
        }
        // A bounded number of reads per wake-up keeps one chatty peer from starving the rest.
        for _ in 0..<4 {
            let result = Result(catching: { () throws(SystemError) -> IOResult<Int> in
                try Syscall.nonBlocking("read") { read(fd, buffer.baseAddress, buffer.count) }
            })
            var filled = false
            switch result {
            case .success(.done(0)):
                framer.finish(into: &outputs)
                readShutDown = true
            case .success(.done(let count)):
                framer.feedBorrowing(UnsafeRawBufferPointer(start: buffer.baseAddress, count: count), into: &outputs)
                filled = count == buffer.count
            case .success(.wouldBlock):
                break
            case .failure:
                close()
                return
            }
            // Spans point into the shared buffer, so this read's lines are served (or copied) before the next read.
            lineEnded = lineEnded || !outputs.isEmpty
            serve(outputs, readInto: buffer)
            outputs.removeAll(keepingCapacity: true)
            // A read that did not fill the buffer took everything there was; the level-triggered loop wakes us
            // again for more, so asking now would only cost a read that says EAGAIN (issue 8).
            if isClosed || !isReading || !filled { break }
        }
        if !isClosed { watchPartialLine(lineEnded: lineEnded) }
    }

    /// Serves the lines of one read in order until the gate closes or the turn is used up; the rest are kept, for
    /// when the gate opens or for the next turn.
    private func serve(_ outputs: [LineFramer.Output], readInto buffer: UnsafeMutableBufferPointer<UInt8>) {
        // Once, not per line: each touch of the unowned server retains it through its side table (issue 8).
        let server = self.server
        for (position, line) in outputs.enumerated() {
            guard !isClosed else { return }
            if mustStopBeforeNextLine() {
                hold(outputs[position...], readInto: buffer)
                if !gate.isPaused { scheduleHeldLines() }
                return
            }
            servedThisTurn += 1
            serve(line, readInto: buffer, server: server)
        }
    }

    private func beginTurn() {
        servedThisTurn = 0
        outputAtTurnStart = output.byteCount
    }

    private func mustStopBeforeNextLine() -> Bool {
        servedThisTurn >= Self.linesPerTurn || output.byteCount - outputAtTurnStart >= Self.bytesPerTurn
            || gateClosesBeforeNextLine()
    }

    private func serve(_ line: LineFramer.Output, readInto buffer: UnsafeMutableBufferPointer<UInt8>, server: Server) {
        switch line {
        case .span(let range): server.dispatch(line: UnsafeBufferPointer(rebasing: buffer[range]), from: self)
        case .line(let bytes): bytes.withUnsafeBufferPointer { server.dispatch(line: $0, from: self) }
        case .tooLarge: server.rejectOversizedLine(from: self)
        }
    }

    /// Copies lines that point into the shared read buffer: it is reused by the next read of any connection.
    private func hold(_ lines: ArraySlice<LineFramer.Output>, readInto buffer: UnsafeMutableBufferPointer<UInt8>) {
        for line in lines {
            switch line {
            case .span(let range): heldLines.append(.line(Array(buffer[range])))
            case .line, .tooLarge: heldLines.append(line)
            }
        }
    }

    private var hasHeldLines: Bool { heldHead < heldLines.count }

    /// Held lines are served on the next turn of the loop, not inside whatever answer or write opened the gate.
    private func scheduleHeldLines() {
        guard !heldLinesScheduled else { return }
        heldLinesScheduled = true
        let loop = server.loop
        loop.schedule(at: loop.now) { [weak self] in
            guard let self, !self.isClosed else { return }
            self.heldLinesScheduled = false
            self.serveHeldLines()
        }
    }

    /// Serves held lines, oldest first, until none is left or the gate closes again.
    private func serveHeldLines() {
        let server = self.server
        beginTurn()
        isDispatching = true
        output.beginBatch()
        while hasHeldLines, !isClosed, !mustStopBeforeNextLine() {
            let line = heldLines[heldHead]
            heldLines[heldHead] = .tooLarge
            heldHead += 1
            servedThisTurn += 1
            serve(line, readInto: server.readBuffer, server: server)
        }
        if !hasHeldLines {
            heldLines = []
            heldHead = 0
        }
        isDispatching = false
        output.endBatch()
        guard !isClosed else { return }
        flush()
        if hasHeldLines && !gate.isPaused { scheduleHeldLines() }
    }

    /// Asks the gate before a line is served; true when reading must stop here.
    private func gateClosesBeforeNextLine() -> Bool {
        if gate.staysOpen(outputBytes: output.byteCount + reserved, inFlight: inFlight, limits: gateLimits) { return false }
        if gate.isPaused { return true }
        return updateGate() == .pause
    }

    private func updateGate() -> ReadGate.Change? {
        let server = self.server
        let uid = peer.uid
        return gate.update(outputBytes: output.byteCount + reserved, inFlight: inFlight,
                           overBudget: { server.isOutputBudgetSpent(uid: uid) }, limits: gateLimits)
    }

    /// Re-reads the gate's facts after output moved or a request finished: pauses, or resumes (held lines first),
    /// and sets epoll's interest to match.
    private func reviewReading() {
        guard !isClosed, !isDispatching else { return }
        if updateGate() == .resume, hasHeldLines { scheduleHeldLines() }
        updateInterest()
        watchPartialLine(lineEnded: false)
    }

    private func readSideClosed() {
        guard !isClosed else { return }
        updateInterest()
        closeIfDrained()
    }

    private func watchPartialLine(lineEnded: Bool) {
        if lineEnded { partialLineSince = nil }
        // A connection that is not read cannot finish its half line: the wait is ours, not the peer's.
        guard framer.hasPartialLine, isReading else {
            partialLineSince = nil
            return
        }
        guard partialLineSince == nil else { return }
        let since = server.loop.now
        partialLineSince = since
        let timeout = server.config.server.idleLineTimeout
        server.loop.schedule(at: since + timeout) { [weak self] in
            guard let self, !self.isClosed, self.partialLineSince == since else { return }
            self.server.logger.notice("closing a connection that left a line unfinished for \(timeout)",
                                      [("ROSTER_CONNECTION", String(self.id))])
            self.close()
        }
    }

    /// Queues an event; `coalescing` names what it is the latest state of, so a peer that does not read gets only
    /// the newest one. A peer that lets events pile up past the hard limit is cut off.
    func sendEvent(_ bytes: [UInt8], coalescing key: OutputQueue.CoalesceKey? = nil) {
        guard !isClosed else { return }
        output.append(bytes, coalescing: key)
        queued(event: true)
    }

    /// Queues the answer to request `id`; one the connection cannot hold becomes an `answer_too_large` error for
    /// that id, so a client always learns what happened to its request (issue 12: the connection used to be closed).
    func sendAnswer(_ bytes: [UInt8], id: JSONValue) {
        guard !isClosed else { return }
        let limit = min(settings.maxAnswerBytes, max(0, settings.outputHardLimitBytes - output.byteCount))
        guard bytes.count <= limit else {
            server.logger.warning("an answer of \(bytes.count) bytes exceeds the \(limit) this connection may hold; "
                                  + "answering answer_too_large", [("ROSTER_CONNECTION", String(self.id))])
            server.sendError(.answerTooLarge(size: bytes.count, limit: limit), id: id, to: self)
            return
        }
        sendReply(bytes)
    }

    /// Queues an answer or an error known to be small.
    func sendReply(_ bytes: [UInt8]) {
        guard !isClosed else { return }
        output.append(bytes)
        queued(event: false)
    }

    /// Queues a line that `build` appends to the output in place (see `OutputQueue.appendPlain`).
    func sendLine(_ build: (inout [UInt8]) -> Void) {
        guard !isClosed else { return }
        output.appendPlain(build)
        queued(event: false)
    }

    private func queued(event: Bool) {
        if !isDispatching { flush() }
        if !isClosed { checkCongestion(event: event) }
    }

    /// A peer that does not read may hold the soft limit for a while; events past the hard limit end it. Answers
    /// are bounded before they are queued (`sendAnswer`), and back-pressure keeps more from being asked.
    private func checkCongestion(event: Bool) {
        if event && output.byteCount > settings.outputHardLimitBytes {
            server.logger.warning("closing a connection whose peer left \(output.byteCount) bytes unread, past "
                                  + "OutputHardLimitBytes=\(settings.outputHardLimitBytes); it was not reading them",
                                  [("ROSTER_CONNECTION", String(id))])
            return close()
        }
        guard output.byteCount > settings.outputSoftLimitBytes else {
            congestedSince = nil
            return
        }
        guard congestedSince == nil else { return }
        let stall = settings.outputStallTimeout
        let since = server.loop.now
        congestedSince = since
        server.loop.schedule(at: since + stall) { [weak self] in
            guard let self, !self.isClosed, self.congestedSince == since,
                  self.output.byteCount > self.settings.outputSoftLimitBytes else { return }
            self.server.logger.warning("closing a connection that has not read its \(self.output.byteCount) unread "
                                       + "bytes for \(stall)", [("ROSTER_CONNECTION", String(self.id))])
            self.close()
        }
    }

    /// Called when an answer goes out; a draining connection may now be done, a paused one read again.
    func requestFinished() {
        inFlight -= 1
        reviewReading()
        closeIfDrained()
    }

    private func flush() {
        var blocked = false
        writing: while !output.isEmpty {
            switch output.write(to: fd) {
            case .done?: continue
            case .wouldBlock?: blocked = true; break writing
            case nil: close(); return
            }
        }
        accountOutput()
        let caughtUp = !blocked && (peerIsBehind || drainWatched)
        if blocked {
            peerIsBehind = true
        } else {
            congestedSince = nil
            peerIsBehind = false
        }
        updateInterest()
        reviewReading()
        closeIfDrained()
        if caughtUp && !isClosed {
            drainWatched = false
            server.outputDrained(self)
        }
    }

    /// Bytes queued that the peer has not read yet.
    var unsentBytes: Int { output.byteCount }

    /// `Server.outputDrained` is called once every byte queued now (and later) is written.
    func notifyWhenDrained() {
        drainWatched = true
    }

    /// Counts `bytes` of an answer that a worker is building as if they were queued already.
    func reserveOutput(_ bytes: Int) {
        guard !isClosed else { return }
        reserved += bytes
        accountOutput()
    }

    /// The answer reserved for is here (or will never come).
    func releaseOutput(_ bytes: Int) {
        reserved -= bytes
        accountOutput()
        reviewReading()
    }

    /// Tells the server's output budget how much this connection holds now.
    private func accountOutput() {
        let bytes = isClosed ? 0 : output.byteCount + reserved
        guard bytes != budgeted else { return }
        server.outputQueuedChanged(uid: peer.uid, by: bytes - budgeted)
        budgeted = bytes
    }

    private func closeIfDrained() {
        // Lines already read in this batch are still owed answers, even if each answer so far went out at once.
        guard !isDispatching, !isClosed else { return }
        guard inFlight == 0 && output.isEmpty && !hasHeldLines else { return }
        if readShutDown || server.isStopping { close() }
    }

    /// Stops reading new requests (shutdown); pending answers still go out, and lines already read but held (see
    /// `ReadGate`) are still served: the peer sent them before the daemon stopped.
    func stopReading() {
        guard !isClosed else { return }
        readShutDown = true
        updateInterest()
        closeIfDrained()
    }

    private func updateInterest() {
        guard let registration, !isClosed else { return }
        var events: UInt32 = 0
        if isReading { events |= EPOLLIN.rawValue | EPOLLRDHUP.rawValue }
        if !output.isEmpty { events |= EPOLLOUT.rawValue }
        guard events != interest else { return }
        interest = events
        try? server.loop.modify(registration, events: events)
    }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        closedFlag.withLock { $0 = true }
        if let registration { server.loop.deregister(registration) }
        Glibc.close(fd)
        // Calls still running on workers keep this object alive; what it held for the peer is freed now.
        output = OutputQueue()
        heldLines = []
        heldHead = 0
        accountOutput()
        server.connectionClosed(self)
    }
}

/// A connection answers its calls itself; what only the server knows (the policy an error is worded under, the
/// counters, the requests held behind a log-in) it asks the server for.
extension Connection: CallHost {
    func sendError(_ error: RosterError, id: JSONValue) {
        server.sendError(error, id: id, to: self)
    }

    func requestAnswered() {
        server.stats.requestsServed += 1
    }

    func authChangeEnded() {
        server.authChangeEnded(on: self)
    }
}
