import CLinux
import RosterCore
import RosterProtocol
import RosterRuntime

// ConnectionMachine — one client connection's rules, without its socket: facts in, actions out.
//
// RULES
//   • Lifecycle: reading → draining (the peer shut its write side, or the daemon stops) → closed. While
//     draining, the requests already read are still answered: a half-closed peer gets what it asked for. The
//     connection closes once none is in flight, no line is held and every byte is written.
//   • Back-pressure (see `ReadGate`): while the peer leaves too much output unread, or too many of its requests
//     are in flight, or the output budget is spent, its requests are not read. Lines already read when the gate
//     closes are held, unserved, and go first when it opens.
//   • Fairness: a turn serves at most `linesPerTurn` lines, or lines until their answers passed `bytesPerTurn`;
//     the rest are held for the next turn, so one pipelining peer does not keep a fresh one's `session.whoami`
//     waiting behind thousands of its own requests.
//   • Output: the answers queued during a turn leave together in one write at its end; one queued outside a
//     turn (a worker's answer, an event) is written at once. A peer whose output stays above the soft limit
//     for `outputStallTimeout` is cut off; so is one that lets events pile up past the hard limit.
//   • A peer may not sit on half a line: `idleLineTimeout` after an unfinished line was first read it is cut
//     off. A connection that is not being read cannot finish its line, so that wait is not held against it.
//   • The output budget hears every change of what the connection holds (output queued, plus output reserved
//     for answers still being built) after each write, reservation and release, and at close.
//   • Whoever asked (`notifyWhenDrained`), or a peer that was behind, hears once the output is all written.
//   • Closed is final: a late answer, timer or write result changes nothing and asks for nothing.
//
// THEORY OF OPERATION
//   `Connection` (the socket code) feeds one fact at a time to `step` and performs the actions it returns, in
//   order: serve a line, set epoll's interest, write, schedule a timer, report output to the budget, close. A
//   fact that arrives while actions are performed (the answer queued by the line being served, the result of a
//   write) waits until they all are: `MachineDriver`'s rule, kept by the connection's own small driver so that
//   a step allocates nothing. Output bytes live in the connection's `OutputQueue`; the machine is told their
//   count by every fact that changes it. What it needs only now and then (the clock, the budget, whether the
//   daemon stops) it asks through `ConnectionQueries`, and only when it needs it.

/// What the connection machine asks of the world while it steps, each only when a rule needs it: the clock
/// when a timer starts, the budget when the output is above the resume mark, the daemon's stopping when a
/// reading connection runs out of work.
protocol ConnectionQueries {
    var clockNow: Instant { get }
    /// Whether all connections together, or those of this connection's uid, hold as much output as they may.
    var outputBudgetSpent: Bool { get }
    var daemonIsStopping: Bool { get }
}

/// One connection's reading, serving, writing and closing, as a value: see the rules above.
struct ConnectionMachine {
    /// A connection serves at most this many lines per turn of the loop, or lines until their answers passed
    /// `bytesPerTurn`, then yields: 150 peers each pipelining thousands of requests made a fresh connection's
    /// `session.whoami` wait for all of theirs. Bytes stand in for the work: one `contacts.list` of 1,000
    /// costs as much as thousands of `session.whoami`.
    static let linesPerTurn = 128
    static let bytesPerTurn = 128 << 10

    /// The settings the rules use; a reload replaces them.
    struct Limits: Equatable {
        var gate: ReadGate.Limits
        var outputSoftLimitBytes: Int
        var outputHardLimitBytes: Int
        var outputStallTimeout: Duration
        var idleLineTimeout: Duration

        init(_ settings: ServerSettings) {
            gate = ReadGate.Limits(pauseBytes: settings.readPauseBytes, resumeBytes: settings.readResumeBytes,
                                   maxInFlight: settings.maxRequestsInFlight)
            outputSoftLimitBytes = settings.outputSoftLimitBytes
            outputHardLimitBytes = settings.outputHardLimitBytes
            outputStallTimeout = settings.outputStallTimeout
            idleLineTimeout = settings.idleLineTimeout
        }
    }

    /// A timer the connection set; each says what it was set for, so one that outlived its reason does nothing.
    enum Timer: Equatable {
        /// Serve the held lines, on the next turn of the loop (not inside whatever opened the gate).
        case heldLines
        /// The unfinished line first read at `since` is still unfinished after `timeout`.
        case unfinishedLine(since: Instant, timeout: Duration)
        /// The output that went above the soft limit at `since` is still above it after `stall`.
        case congestion(since: Instant, stall: Duration)
    }

    /// What a write did.
    enum WriteOutcome: Equatable {
        /// Everything queued was written.
        case wroteAll
        /// The socket took what it could and refused the rest.
        case blocked
        /// The peer is gone (`writev` failed with `errno`).
        case failed(errno: Int32)
    }

    /// What a write was for, beyond writing: the rule to apply once its result is known.
    enum AfterWrite: Equatable {
        case nothing
        /// An answer (`event: false`) or an event was queued outside a turn: judge the congestion it leaves.
        case checkCongestion(event: Bool)
        /// A turn of held lines ended: if some are left and the gate is open, another turn is due.
        case resumeHeldLines
    }

    /// Why a connection closed.
    enum CloseReason: Equatable {
        /// Its read side ended (or the daemon stops) and nothing is owed any more.
        case drained
        /// The daemon closed it.
        case requested
        /// The peer hung up or the socket reported an error, with nobody left to read what is owed.
        case peerGone
        case readFailed(errno: Int32)
        case writeFailed(errno: Int32)
        case unfinishedLine(after: Duration)
        case outputOverHardLimit(bytes: Int, limit: Int)
        case stalled(bytes: Int, after: Duration)
        /// The loop could not change what it watches on the socket (`epoll_ctl` failed with `errno`): left as
        /// it was, it would spin or hang.
        case interestFailed(errno: Int32)
    }

    /// What the socket code does for the machine, in the order given.
    enum Action: Equatable {
        /// A turn begins: the answers queued from here to `endTurn` leave together (see `OutputQueue.beginBatch`).
        case beginTurn
        /// Hands a line just read to the dispatcher (a span is read from the shared read buffer): what
        /// `servesLineNow` answering true stands for, which the machine gives instead so as not to copy the line.
        case serve(LineFramer.Output)
        /// Hands a held line to the dispatcher, then feeds `heldLineServed`.
        case serveHeld(LineFramer.Output)
        /// The turn is over: ends the batch, then writes as `flush` does.
        case endTurn(then: AfterWrite)
        /// Writes what the socket takes, then feeds `wrote` with `then`.
        case flush(then: AfterWrite)
        case setInterest(UInt32)
        case schedule(Timer)
        /// Tells the output budget the connection holds `delta` bytes more (or fewer).
        case accountOutput(delta: Int)
        /// Tells whoever waits that the output is all written.
        case notifyDrained
        /// Stops watching and closes the socket, drops the output, and tells the server.
        case close(CloseReason)
    }

    /// What happened (besides a line read, which is `servesLineNow`'s and `holdLine`'s). Nothing here holds memory of its own, so a
    /// fact waiting in the connection's queue is copied as plain bytes.
    enum Fact {
        /// The socket is readable and will be read now: a turn begins.
        case readingBegan
        /// The peer shut its write side (a read returned 0).
        case endOfStream
        /// The reads of this wake-up are over; `partialLine`: the framer holds an unfinished line.
        case readEnded(lineEnded: Bool, partialLine: Bool)
        case readFailed(errno: Int32)
        /// The socket takes output again (EPOLLOUT).
        case writable
        /// A write's result, with the bytes still queued after it.
        case wrote(WriteOutcome, outputBytes: Int, then: AfterWrite)
        /// An answer or an event was queued; `outputBytes`: the queue's size now.
        case queued(event: Bool, outputBytes: Int)
        /// A request was read (or held behind a change of who the session is) and is owed an answer.
        case requestStarted
        /// A request's answer went out.
        case requestFinished
        /// `bytes` of an answer being built off the loop count as output from now on.
        case outputReserved(Int)
        /// The answer reserved for is here (or will never come).
        case outputReleased(Int)
        /// A held line was served (and what serving it fed was stepped).
        case heldLineServed
        case timerFired(Timer)
        /// EPOLLHUP, or EPOLLERR when `error`.
        case hungUp(error: Bool)
        case interestFailed(errno: Int32)
        /// Someone waits to hear once the output is all written, even if the socket never refused any.
        case notifyWhenDrained
        case limitsChanged(Limits)
        /// The daemon stops: no new request is read, but held lines and answers owed still go out.
        case stopReading
        case close
    }

    /// Lines read but not served, oldest first; never spans, as the read buffer is reused by the next read.
    struct HeldLines: Equatable {
        private var lines: [LineFramer.Output] = []
        private var head = 0

        var isEmpty: Bool { head == lines.count }
        var count: Int { lines.count - head }

        mutating func append(_ line: LineFramer.Output, from buffer: UnsafeBufferPointer<UInt8>) {
            switch line {
            case .span(let range): lines.append(.line(Array(UnsafeBufferPointer(rebasing: buffer[range]))))
            case .line, .tooLarge: lines.append(line)
            }
        }

        mutating func popFirst() -> LineFramer.Output? {
            guard !isEmpty else { return nil }
            let line = lines[head]
            // Freed now: a line served must not stay alive until the last of its neighbours is.
            lines[head] = .tooLarge
            head += 1
            if isEmpty { self = HeldLines() }
            return line
        }
    }

    /// The lines served and the output queued since the turn began (see `linesPerTurn`).
    struct Turn: Equatable {
        var served = 0
        let outputAtStart: Int
    }

    /// Where the connection stands while it is open.
    enum Phase: Equatable {
        /// New requests are read (unless the gate is closed or lines are held).
        case reading(UnfinishedLine)
        /// No byte more is read; what was read is still answered.
        case draining
    }

    /// An unfinished line in the framer, and since when the peer has been given to finish it (nil while the
    /// connection is not read, as the wait is then ours).
    enum UnfinishedLine: Equatable {
        case none
        case buffered(since: Instant?)
    }

    /// Everything an open connection keeps; a closed one keeps nothing. A reference, so that a step changes it
    /// in place: taken out of the enum and put back, it was two copies of its 150 bytes per step, several steps
    /// per line. Nothing else holds it (the machine is not copied), so it behaves as a value would.
    final class Open {
        var limits: Limits
        var phase: Phase = .reading(.none)
        var gate = ReadGate()
        var held = HeldLines()
        /// Requests read and not yet answered; a half-closed peer waits for these.
        var inFlight = 0
        /// Bytes promised to answers being built off the loop (a big page, an export page): the gate and the
        /// budget count them as output already, so a peer cannot start more of them than it may hold.
        var reserved = 0
        /// Bytes in the output queue.
        var outputBytes = 0
        /// The part of output and reserved counted in the server's output budget.
        var budgeted = 0
        /// The events asked of epoll (as of the end of the last step).
        var interest = EPOLLIN.rawValue | EPOLLRDHUP.rawValue
        /// The socket refused output since the queue was last empty: the peer is not keeping up.
        var peerIsBehind = false
        var drainWatched = false
        /// When the output first stayed above the soft limit; cleared once it drains below.
        var congestedSince: Instant?
        /// The turn under way (lines are being served and their answers batched), if any.
        var turn: Turn?
        var heldLinesScheduled = false

        init(limits: Limits) {
            self.limits = limits
        }
    }

    enum State {
        case open(Open)
        case closed
    }

    /// Whether an open connection stays open after a step.
    enum Fate {
        case stillOpen
        case closed
    }

    private(set) var state: State

    init(limits: Limits) {
        state = .open(Open(limits: limits))
    }

    // MARK: Queries

    var isClosed: Bool {
        switch state {
        case .open: false
        case .closed: true
        }
    }

    /// Whether new bytes are taken from the socket now.
    var isReading: Bool {
        switch state {
        case .open(let open): open.isReading
        case .closed: false
        }
    }

    /// Whether reading is stopped by back-pressure.
    var isReadPaused: Bool {
        switch state {
        case .open(let open): open.gate.isPaused
        case .closed: false
        }
    }

    var peerIsBehind: Bool {
        switch state {
        case .open(let open): open.peerIsBehind
        case .closed: false
        }
    }

    var inFlight: Int {
        switch state {
        case .open(let open): open.inFlight
        case .closed: 0
        }
    }

    /// The events epoll is asked for now.
    var interest: UInt32 {
        switch state {
        case .open(let open): open.interest
        case .closed: 0
        }
    }

    // MARK: Stepping

    /// A line framed from a read: whether it is served now (and counted in the turn, the connection serving
    /// it as the `serve` action says); when not, `holdLine` gets it. Only the top of the loop reads, so a line
    /// is never fed while actions are performed: it is not a queued fact.
    mutating func servesLineNow<Queries: ConnectionQueries>(_ queries: Queries) -> Bool {
        switch state {
        case .open(let open): open.servesLineNow(queries)
        case .closed: false
        }
    }

    /// Keeps a line `servesLineNow` did not serve (a span lies in `buffer`, which the next read reuses) and
    /// says what is due instead; a closed connection drops it.
    mutating func holdLine<Queries: ConnectionQueries>(_ line: LineFramer.Output, from buffer: UnsafeBufferPointer<UInt8>,
                                                       _ queries: Queries) -> ConnectionActions {
        switch state {
        case .open(let open): open.holdLine(line, from: buffer, queries)
        case .closed: ConnectionActions()
        }
    }

    /// Applies `fact` at once when a step would ask for nothing, and says whether it did; false means `step`
    /// it. Only the facts of nearly every line a peer sends, inside a turn, qualify: its request owed, its
    /// answer queued (while the output stays at or under the soft limit, or its congestion is timed already),
    /// the request answered. The connection asks this only while actions are performed and no fact waits, so
    /// applying such a fact now rather than after the rest of those actions changes nothing but the cost.
    mutating func applyWithoutStep(_ fact: Fact) -> Bool {
        switch state {
        case .open(let open): open.applyWithoutStep(fact)
        case .closed: false
        }
    }

    /// Takes one fact and returns what to do about it.
    mutating func step<Queries: ConnectionQueries>(_ fact: Fact, _ queries: Queries) -> ConnectionActions {
        var actions = ConnectionActions()
        switch state {
        case .open(let open):
            if open.step(fact, queries, &actions) == .closed { state = .closed }
        case .closed:
            break
        }
        return actions
    }
}

extension ConnectionMachine.Open {
    typealias Machine = ConnectionMachine

    var isReading: Bool {
        switch phase {
        case .reading: !gate.isPaused && held.isEmpty
        case .draining: false
        }
    }

    /// Steps `fact`; epoll is asked for the events the step leaves the connection wanting, once, as its last
    /// action (a step may change its mind: a write that empties the queue, then the gate opening).
    func step<Queries: ConnectionQueries>(_ fact: Machine.Fact, _ queries: Queries,
                                                   _ actions: inout ConnectionActions) -> Machine.Fate {
        let interestBefore = interest
        let fate = apply(fact, queries, &actions)
        switch fate {
        case .stillOpen: if interest != interestBefore { actions.append(.setInterest(interest)) }
        case .closed: break
        }
        return fate
    }

    private func apply<Queries: ConnectionQueries>(_ fact: Machine.Fact, _ queries: Queries,
                                                            _ actions: inout ConnectionActions) -> Machine.Fate {
        switch fact {
        case .readingBegan:
            turn = Machine.Turn(outputAtStart: outputBytes)
            actions.append(.beginTurn)
            return .stillOpen
        case .endOfStream:
            phase = .draining
            return .stillOpen
        case .readEnded(let lineEnded, let partialLine):
            watchUnfinishedLine(lineEnded: lineEnded, buffered: partialLine, queries, &actions)
            turn = nil
            actions.append(.endTurn(then: .nothing))
            return .stillOpen
        case .readFailed(let errno):
            return close(.readFailed(errno: errno), &actions)
        case .writable:
            actions.append(.flush(then: .nothing))
            return .stillOpen
        case .wrote(let outcome, let bytes, let then):
            return wrote(outcome, outputBytes: bytes, then: then, queries, &actions)
        case .queued(let event, let bytes):
            outputBytes = bytes
            guard turn == nil else { return checkCongestion(event: event, queries, &actions) }
            actions.append(.flush(then: .checkCongestion(event: event)))
            return .stillOpen
        case .requestStarted:
            inFlight += 1
            return .stillOpen
        case .requestFinished:
            inFlight -= 1
            reviewReading(queries, &actions)
            return closeIfDrained(queries, &actions)
        case .outputReserved(let bytes):
            reserved += bytes
            accountOutput(&actions)
            return .stillOpen
        case .outputReleased(let bytes):
            reserved -= bytes
            accountOutput(&actions)
            reviewReading(queries, &actions)
            return .stillOpen
        case .heldLineServed:
            serveNextHeldLine(queries, &actions)
            return .stillOpen
        case .timerFired(let timer):
            return timerFired(timer, queries, &actions)
        case .hungUp(let error):
            // A hang-up while the peer is still read is seen by the read (end of stream) first; otherwise
            // nobody is left to read what is owed, and the hang-up would come back on every turn of the loop.
            guard error || !isReading else { return .stillOpen }
            return close(.peerGone, &actions)
        case .interestFailed(let errno):
            return close(.interestFailed(errno: errno), &actions)
        case .notifyWhenDrained:
            drainWatched = true
            return .stillOpen
        case .limitsChanged(let new):
            limits = new
            return .stillOpen
        case .stopReading:
            phase = .draining
            updateInterest()
            return closeIfDrained(queries, &actions)
        case .close:
            return close(.requested, &actions)
        }
    }

    /// See `ConnectionMachine.applyWithoutStep`; each case does what `apply` does for its fact inside a turn,
    /// where that is no action.
    func applyWithoutStep(_ fact: Machine.Fact) -> Bool {
        guard turn != nil else { return false }
        switch fact {
        case .requestStarted:
            inFlight += 1
        case .requestFinished:
            // Inside a turn, the turn's end reviews reading and closing.
            inFlight -= 1
        case .queued(event: false, let bytes):
            if bytes <= limits.outputSoftLimitBytes {
                congestedSince = nil
            } else if congestedSince == nil {
                return false
            }
            outputBytes = bytes
        case .queued(event: true, _), .readingBegan, .endOfStream, .readEnded, .readFailed, .writable, .wrote,
             .outputReserved, .outputReleased, .heldLineServed, .timerFired, .hungUp, .interestFailed,
             .notifyWhenDrained, .limitsChanged, .stopReading, .close:
            return false
        }
        return true
    }

    // MARK: Serving

    func servesLineNow<Queries: ConnectionQueries>(_ queries: Queries) -> Bool {
        // Once a line of this read is held, the ones after it wait behind it, in order.
        guard held.isEmpty, var turn, !mustStop(before: turn, queries) else { return false }
        turn.served += 1
        self.turn = turn
        return true
    }

    func holdLine<Queries: ConnectionQueries>(_ line: LineFramer.Output, from buffer: UnsafeBufferPointer<UInt8>,
                                              _ queries: Queries) -> ConnectionActions {
        var actions = ConnectionActions()
        let behindHeldLines = !held.isEmpty
        held.append(line, from: buffer)
        if !behindHeldLines && !gate.isPaused { scheduleHeldLines(&actions) }
        return actions
    }

    /// Serves the oldest held line, or ends the turn when none is left or the turn or the gate says stop.
    private func serveNextHeldLine<Queries: ConnectionQueries>(_ queries: Queries,
                                                                        _ actions: inout ConnectionActions) {
        if var turn, !held.isEmpty, !mustStop(before: turn, queries), let line = held.popFirst() {
            turn.served += 1
            self.turn = turn
            actions.append(.serveHeld(line))
            return
        }
        turn = nil
        actions.append(.endTurn(then: .resumeHeldLines))
    }

    private func mustStop<Queries: ConnectionQueries>(before turn: Machine.Turn, _ queries: Queries) -> Bool {
        turn.served >= Machine.linesPerTurn || outputBytes - turn.outputAtStart >= Machine.bytesPerTurn
            || gateClosesBeforeNextLine(queries)
    }

    /// Asks the gate before a line is served; true when reading must stop here. The common case costs two
    /// comparisons, as this runs before every line a peer sends.
    private func gateClosesBeforeNextLine<Queries: ConnectionQueries>(_ queries: Queries) -> Bool {
        if gate.staysOpen(outputBytes: outputBytes + reserved, inFlight: inFlight, limits: limits.gate) { return false }
        if gate.isPaused { return true }
        return updateGate(queries) == .pause
    }

    private func updateGate<Queries: ConnectionQueries>(_ queries: Queries) -> ReadGate.Change? {
        gate.update(outputBytes: outputBytes + reserved, inFlight: inFlight,
                    overBudget: { queries.outputBudgetSpent }, limits: limits.gate)
    }

    private func scheduleHeldLines(_ actions: inout ConnectionActions) {
        guard !heldLinesScheduled else { return }
        heldLinesScheduled = true
        actions.append(.schedule(.heldLines))
    }

    /// Re-reads the gate's facts after output moved or a request finished: pauses, or resumes (held lines
    /// first), and sets epoll's interest to match. Inside a turn, the turn's end does this.
    private func reviewReading<Queries: ConnectionQueries>(_ queries: Queries,
                                                                    _ actions: inout ConnectionActions) {
        guard turn == nil else { return }
        if updateGate(queries) == .resume, !held.isEmpty { scheduleHeldLines(&actions) }
        updateInterest()
        watchUnfinishedLine(lineEnded: false, buffered: nil, queries, &actions)
    }

    /// Starts the unfinished-line timer when half a line waits for a peer that is being read; `buffered` is
    /// what the framer holds after a read, nil when no read happened since the last look.
    private func watchUnfinishedLine<Queries: ConnectionQueries>(lineEnded: Bool, buffered: Bool?,
                                                                          _ queries: Queries,
                                                                          _ actions: inout ConnectionActions) {
        switch phase {
        case .draining:
            return
        case .reading(let unfinished):
            var since: Instant?
            switch unfinished {
            case .none: if buffered != true { return }
            case .buffered(let started): since = lineEnded ? nil : started
            }
            guard buffered ?? true else {
                phase = .reading(.none)
                return
            }
            guard isReading else {
                phase = .reading(.buffered(since: nil))
                return
            }
            if since == nil {
                let now = queries.clockNow
                since = now
                actions.append(.schedule(.unfinishedLine(since: now, timeout: limits.idleLineTimeout)))
            }
            phase = .reading(.buffered(since: since))
        }
    }

    // MARK: Writing

    private func wrote<Queries: ConnectionQueries>(_ outcome: Machine.WriteOutcome, outputBytes bytes: Int,
                                                            then: Machine.AfterWrite, _ queries: Queries,
                                                            _ actions: inout ConnectionActions) -> Machine.Fate {
        let blocked: Bool
        switch outcome {
        case .failed(let errno): return close(.writeFailed(errno: errno), &actions)
        case .blocked: blocked = true
        case .wroteAll: blocked = false
        }
        outputBytes = bytes
        accountOutput(&actions)
        let caughtUp = !blocked && (peerIsBehind || drainWatched)
        peerIsBehind = blocked
        if !blocked { congestedSince = nil }
        updateInterest()
        reviewReading(queries, &actions)
        if closeIfDrained(queries, &actions) == .closed { return .closed }
        if caughtUp {
            drainWatched = false
            actions.append(.notifyDrained)
        }
        switch then {
        case .nothing:
            return .stillOpen
        case .checkCongestion(let event):
            return checkCongestion(event: event, queries, &actions)
        case .resumeHeldLines:
            if !held.isEmpty && !gate.isPaused { scheduleHeldLines(&actions) }
            return .stillOpen
        }
    }

    /// A peer that does not read may hold the soft limit for a while; events past the hard limit end it.
    /// Answers are bounded before they are queued (`Connection.sendAnswer`), and back-pressure keeps more from
    /// being asked.
    private func checkCongestion<Queries: ConnectionQueries>(event: Bool, _ queries: Queries,
                                                                      _ actions: inout ConnectionActions) -> Machine.Fate {
        if event && outputBytes > limits.outputHardLimitBytes {
            return close(.outputOverHardLimit(bytes: outputBytes, limit: limits.outputHardLimitBytes), &actions)
        }
        guard outputBytes > limits.outputSoftLimitBytes else {
            congestedSince = nil
            return .stillOpen
        }
        guard congestedSince == nil else { return .stillOpen }
        let now = queries.clockNow
        congestedSince = now
        actions.append(.schedule(.congestion(since: now, stall: limits.outputStallTimeout)))
        return .stillOpen
    }

    /// The events the connection wants now; `step` asks epoll for them at its end.
    private func updateInterest() {
        var events: UInt32 = 0
        if isReading { events |= EPOLLIN.rawValue | EPOLLRDHUP.rawValue }
        if outputBytes > 0 { events |= EPOLLOUT.rawValue }
        interest = events
    }

    /// Tells the server's output budget how much this connection holds now.
    private func accountOutput(_ actions: inout ConnectionActions) {
        let bytes = outputBytes + reserved
        guard bytes != budgeted else { return }
        actions.append(.accountOutput(delta: bytes - budgeted))
        budgeted = bytes
    }

    // MARK: Timers and closing

    private func timerFired<Queries: ConnectionQueries>(_ timer: Machine.Timer, _ queries: Queries,
                                                                 _ actions: inout ConnectionActions) -> Machine.Fate {
        switch timer {
        case .heldLines:
            heldLinesScheduled = false
            turn = Machine.Turn(outputAtStart: outputBytes)
            actions.append(.beginTurn)
            serveNextHeldLine(queries, &actions)
            return .stillOpen
        case .unfinishedLine(let since, let timeout):
            guard case .reading(.buffered(since: since)) = phase else { return .stillOpen }
            return close(.unfinishedLine(after: timeout), &actions)
        case .congestion(let since, let stall):
            guard congestedSince == since, outputBytes > limits.outputSoftLimitBytes else { return .stillOpen }
            return close(.stalled(bytes: outputBytes, after: stall), &actions)
        }
    }

    private func closeIfDrained<Queries: ConnectionQueries>(_ queries: Queries,
                                                                     _ actions: inout ConnectionActions) -> Machine.Fate {
        // Lines already read in this turn are still owed answers, even if each answer so far went out at once.
        guard turn == nil, inFlight == 0, outputBytes == 0, held.isEmpty else { return .stillOpen }
        switch phase {
        case .draining: return close(.drained, &actions)
        case .reading: return queries.daemonIsStopping ? close(.drained, &actions) : .stillOpen
        }
    }

    private func close(_ reason: Machine.CloseReason, _ actions: inout ConnectionActions) -> Machine.Fate {
        if budgeted != 0 { actions.append(.accountOutput(delta: -budgeted)) }
        actions.append(.close(reason))
        return .closed
    }
}

/// The actions of one step, kept inline: a step runs several times per line a peer sends, and an array each
/// time was an allocation per step. Most steps ask for one action or none; the rare one with more than two
/// spills into an array, made only then: even an empty array is a retain and a release per step.
struct ConnectionActions: Sequence, Equatable {
    typealias Action = ConnectionMachine.Action

    private var first: Action?
    private var second: Action?
    private var more: [Action]?
    private(set) var count = 0

    init() {}

    init(_ actions: [Action]) {
        for action in actions { append(action) }
    }

    mutating func append(_ action: Action) {
        if count == 0 {
            first = action
        } else if count == 1 {
            second = action
        } else if more == nil {
            more = [action]
        } else {
            more?.append(action)
        }
        count += 1
    }

    /// The action at `index`, which is below `count`.
    subscript(index: Int) -> Action {
        if index == 0, let first { return first }
        if index == 1, let second { return second }
        guard let more else { preconditionFailure("action \(index) of \(count)") }
        return more[index - 2]
    }

    struct Iterator: IteratorProtocol {
        fileprivate let actions: ConnectionActions
        fileprivate var index = 0

        mutating func next() -> Action? {
            guard index < actions.count else { return nil }
            defer { index += 1 }
            return actions[index]
        }
    }

    func makeIterator() -> Iterator { Iterator(actions: self) }

    static func == (lhs: ConnectionActions, rhs: ConnectionActions) -> Bool {
        Array(lhs) == Array(rhs)
    }
}
