import CLinux
import Glibc
import RosterCore
import RosterProtocol
import Testing
@testable import RosterRuntime
@testable import RosterServer

/// What the machine may ask, set by the test.
private struct Asked: ConnectionQueries {
    var clockNow: Instant = .zero
    var outputBudgetSpent = false
    var daemonIsStopping = false
}

/// The machine, the bytes its spans point into, and every step's actions, so that whole histories compare.
private struct Rig {
    typealias Action = ConnectionMachine.Action

    var machine: ConnectionMachine
    var asked = Asked()
    /// What a read put in the shared buffer: lines `a`, `bb`, `ccc`, … at known offsets.
    let buffer: [UInt8] = Array("a\nbb\nccc\ndddd\neeeee\n".utf8)

    init(_ settings: ServerSettings = ServerSettings()) {
        machine = ConnectionMachine(limits: ConnectionMachine.Limits(settings))
    }

    /// The span of the `n`th line of `buffer` (0: `a`, 1: `bb`, …).
    func span(_ n: Int) -> LineFramer.Output {
        let start = (0..<n).reduce(0) { $0 + $1 + 2 }
        return .span(start..<(start + n + 1))
    }

    func copy(_ n: Int) -> LineFramer.Output {
        .line(Array(repeating: buffer[(0..<n).reduce(0) { $0 + $1 + 2 }], count: n + 1))
    }

    mutating func step(_ fact: ConnectionMachine.Fact) -> [Action] {
        Array(machine.step(fact, asked))
    }

    /// A fact fed while actions are performed with none waiting, as the connection feeds it: applied without a
    /// step when the machine can (`nil`), else stepped.
    mutating func feedDuringActions(_ fact: ConnectionMachine.Fact) -> [Action]? {
        machine.applyWithoutStep(fact) ? nil : step(fact)
    }

    /// A line read, with "served now" written as the `serve` action it stands for.
    mutating func read(_ n: Int) -> [Action] {
        let line = span(n)
        if machine.servesLineNow(asked) { return [.serve(line)] }
        return buffer.withUnsafeBufferPointer { Array(machine.holdLine(line, from: $0, asked)) }
    }
}

private let readable = EPOLLIN.rawValue | EPOLLRDHUP.rawValue
private let writable = EPOLLOUT.rawValue

@Suite("Connection machine")
struct ConnectionMachineTests {
    /// A request and its answer: served inside the turn, written once at its end, nothing more asked.
    @Test func aPingPongTurnIsOneServeAndOneWrite() {
        var rig = Rig()
        #expect(rig.step(.readingBegan) == [.beginTurn])
        #expect(rig.read(0) == [.serve(rig.span(0))])
        #expect(rig.step(.queued(event: false, outputBytes: 40)) == [])
        #expect(rig.step(.readEnded(lineEnded: true, partialLine: false)) == [.endTurn(then: .nothing)])
        #expect(rig.step(.wrote(.wroteAll, outputBytes: 0, then: .nothing)) == [])
        #expect(rig.machine.isReading)
        #expect(!rig.machine.peerIsBehind)
    }

    /// Outside a turn an answer is written at once; what the socket refuses makes the peer "behind", asks for
    /// EPOLLOUT and is counted in the budget, and catching up tells whoever waits.
    @Test func anAnswerOutsideATurnIsWrittenAtOnceAndARefusalWaitsForWritable() {
        var rig = Rig()
        #expect(rig.step(.queued(event: false, outputBytes: 100)) == [.flush(then: .checkCongestion(event: false))])
        #expect(rig.step(.wrote(.blocked, outputBytes: 40, then: .checkCongestion(event: false)))
                == [.accountOutput(delta: 40), .setInterest(readable | writable)])
        #expect(rig.machine.peerIsBehind)
        #expect(rig.step(.writable) == [.flush(then: .nothing)])
        #expect(rig.step(.wrote(.wroteAll, outputBytes: 0, then: .nothing))
                == [.accountOutput(delta: -40), .notifyDrained, .setInterest(readable)])
        #expect(!rig.machine.peerIsBehind)
        // Asked to hear of it, a connection that never fell behind still hears once, and once only.
        #expect(rig.step(.notifyWhenDrained) == [])
        #expect(rig.step(.queued(event: true, outputBytes: 10)) == [.flush(then: .checkCongestion(event: true))])
        #expect(rig.step(.wrote(.wroteAll, outputBytes: 0, then: .checkCongestion(event: true))) == [.notifyDrained])
        #expect(rig.step(.queued(event: true, outputBytes: 10)) == [.flush(then: .checkCongestion(event: true))])
        #expect(rig.step(.wrote(.wroteAll, outputBytes: 0, then: .checkCongestion(event: true))) == [])
    }

    /// The gate closes before the third line (two in flight): that line and the rest of the read are held as
    /// copies (the read buffer is reused), reading stops, and they are served, oldest first, on a later turn
    /// once a request finishes.
    @Test func linesReadWhenTheGateClosesAreHeldAndServedFirstWhenItOpens() {
        var settings = ServerSettings()
        settings.maxRequestsInFlight = 2
        var rig = Rig(settings)
        #expect(rig.step(.readingBegan) == [.beginTurn])
        #expect(rig.read(0) == [.serve(rig.span(0))])
        #expect(rig.step(.requestStarted) == [])
        #expect(rig.read(1) == [.serve(rig.span(1))])
        #expect(rig.step(.requestStarted) == [])
        #expect(rig.read(2) == [])
        #expect(rig.read(3) == [])
        #expect(rig.machine.isReadPaused)
        #expect(!rig.machine.isReading)
        #expect(rig.step(.readEnded(lineEnded: true, partialLine: false)) == [.endTurn(then: .nothing)])
        #expect(rig.step(.wrote(.wroteAll, outputBytes: 0, then: .nothing)) == [.setInterest(0)])
        // One answer goes out: the gate opens, but the held lines go first, on the next turn of the loop.
        #expect(rig.step(.requestFinished) == [.schedule(.heldLines)])
        #expect(!rig.machine.isReading)
        #expect(rig.step(.timerFired(.heldLines)) == [.beginTurn, .serveHeld(rig.copy(2))])
        #expect(rig.step(.requestStarted) == [])
        // Two in flight again: the turn ends with `dddd` still held.
        #expect(rig.step(.heldLineServed) == [.endTurn(then: .resumeHeldLines)])
        #expect(rig.step(.wrote(.wroteAll, outputBytes: 0, then: .resumeHeldLines)) == [])
        #expect(rig.step(.requestFinished) == [.schedule(.heldLines)])
        #expect(rig.step(.timerFired(.heldLines)) == [.beginTurn, .serveHeld(rig.copy(3))])
        #expect(rig.step(.heldLineServed) == [.endTurn(then: .resumeHeldLines)])
        // Nothing held, the gate open: reading resumes.
        #expect(rig.step(.wrote(.wroteAll, outputBytes: 0, then: .resumeHeldLines)) == [.setInterest(readable)])
        #expect(rig.machine.isReading)
    }

    /// A turn serves `linesPerTurn` lines; the next one waits for a turn of its own, scheduled at once as the
    /// gate is open.
    @Test func aTurnServesAtMostLinesPerTurn() {
        var rig = Rig()
        _ = rig.step(.readingBegan)
        for _ in 0..<ConnectionMachine.linesPerTurn { #expect(rig.read(0) == [.serve(rig.span(0))]) }
        #expect(rig.read(1) == [.schedule(.heldLines)])
        #expect(rig.read(2) == [])
        #expect(rig.step(.readEnded(lineEnded: true, partialLine: false)) == [.endTurn(then: .nothing)])
        #expect(rig.step(.wrote(.wroteAll, outputBytes: 0, then: .nothing)) == [.setInterest(0)])
        #expect(rig.step(.timerFired(.heldLines)) == [.beginTurn, .serveHeld(rig.copy(1))])
        #expect(rig.step(.heldLineServed) == [.serveHeld(rig.copy(2))])
        #expect(rig.step(.heldLineServed) == [.endTurn(then: .resumeHeldLines)])
        #expect(rig.step(.wrote(.wroteAll, outputBytes: 0, then: .resumeHeldLines)) == [.setInterest(readable)])
    }

    /// A half-closed peer gets the answer to what it sent: the connection closes only once that is written.
    @Test func aHalfClosedPeerIsAnsweredBeforeTheConnectionCloses() {
        var rig = Rig()
        _ = rig.step(.readingBegan)
        #expect(rig.read(0) == [.serve(rig.span(0))])
        #expect(rig.step(.requestStarted) == [])
        #expect(rig.step(.endOfStream) == [])
        #expect(rig.step(.readEnded(lineEnded: true, partialLine: false)) == [.endTurn(then: .nothing)])
        #expect(rig.step(.wrote(.wroteAll, outputBytes: 0, then: .nothing)) == [.setInterest(0)])
        // The answer comes from a worker, outside any turn.
        #expect(rig.step(.queued(event: false, outputBytes: 30)) == [.flush(then: .checkCongestion(event: false))])
        #expect(rig.step(.wrote(.wroteAll, outputBytes: 0, then: .checkCongestion(event: false))) == [])
        #expect(rig.step(.requestFinished) == [.close(.drained)])
        #expect(rig.machine.isClosed)
    }

    /// Closed in the middle of a call: the call's late answer, its release and every timer change nothing.
    @Test func aCallAnsweredAfterTheConnectionClosedIsDropped() {
        var rig = Rig()
        _ = rig.step(.readingBegan)
        _ = rig.read(0)
        #expect(rig.step(.requestStarted) == [])
        #expect(rig.step(.outputReserved(1_000)) == [.accountOutput(delta: 1_000)])
        #expect(rig.step(.readEnded(lineEnded: true, partialLine: false)) == [.endTurn(then: .nothing)])
        #expect(rig.step(.wrote(.wroteAll, outputBytes: 0, then: .nothing)) == [])
        // What the budget counted for this connection is given back as it closes.
        #expect(rig.step(.close) == [.accountOutput(delta: -1_000), .close(.requested)])
        #expect(rig.step(.outputReleased(1_000)) == [])
        #expect(rig.step(.queued(event: false, outputBytes: 50)) == [])
        #expect(rig.step(.requestFinished) == [])
        #expect(rig.step(.timerFired(.heldLines)) == [])
        #expect(rig.step(.close) == [])
        #expect(rig.machine.isClosed)
    }

    /// Half a line left in the framer starts the peer's clock; a finished line restarts it; a connection that is
    /// not read is not timed; and a timer that outlived the line it was set for does nothing.
    @Test func anUnfinishedLineIsTimedOnlyWhileThePeerIsRead() {
        var settings = ServerSettings()
        settings.maxRequestsInFlight = 1
        let timeout = settings.idleLineTimeout
        var rig = Rig(settings)
        rig.asked.clockNow = .milliseconds(10)
        _ = rig.step(.readingBegan)
        let first = ConnectionMachine.Timer.unfinishedLine(since: .milliseconds(10), timeout: timeout)
        #expect(rig.step(.readEnded(lineEnded: false, partialLine: true))
                == [.schedule(first), .endTurn(then: .nothing)])
        _ = rig.step(.wrote(.wroteAll, outputBytes: 0, then: .nothing))
        // More of the same line: the clock keeps running from its start.
        rig.asked.clockNow = .milliseconds(20)
        _ = rig.step(.readingBegan)
        #expect(rig.step(.readEnded(lineEnded: false, partialLine: true)) == [.endTurn(then: .nothing)])
        _ = rig.step(.wrote(.wroteAll, outputBytes: 0, then: .nothing))
        // A line ended and another began: a new clock, and the first timer is stale.
        rig.asked.clockNow = .milliseconds(30)
        _ = rig.step(.readingBegan)
        #expect(rig.read(0) == [.serve(rig.span(0))])
        #expect(rig.step(.requestStarted) == [])
        let second = ConnectionMachine.Timer.unfinishedLine(since: .milliseconds(30), timeout: timeout)
        #expect(rig.step(.readEnded(lineEnded: true, partialLine: true))
                == [.schedule(second), .endTurn(then: .nothing)])
        // The gate closes (one in flight): the connection is not read, so its half line is no longer timed.
        #expect(rig.step(.wrote(.wroteAll, outputBytes: 0, then: .nothing)) == [.setInterest(0)])
        #expect(rig.step(.timerFired(first)) == [])
        rig.asked.clockNow = .milliseconds(40)
        let third = ConnectionMachine.Timer.unfinishedLine(since: .milliseconds(40), timeout: timeout)
        #expect(rig.step(.requestFinished) == [.schedule(third), .setInterest(readable)])
        #expect(rig.step(.timerFired(second)) == [])
        #expect(rig.step(.timerFired(third)) == [.close(.unfinishedLine(after: timeout))])
    }

    /// Events past the hard limit end the connection at once; output held above the soft limit ends it after
    /// the stall timeout, unless it drains first.
    @Test func congestionCutsOffAPeerThatDoesNotRead() {
        var settings = ServerSettings()
        settings.outputSoftLimitBytes = 1_000
        settings.outputHardLimitBytes = 4_000
        settings.outputPauseBytes = 100_000
        let stall = settings.outputStallTimeout
        var rig = Rig(settings)
        _ = rig.step(.readingBegan)
        _ = rig.read(0)
        let congested = ConnectionMachine.Timer.congestion(since: .zero, stall: stall)
        #expect(rig.step(.queued(event: false, outputBytes: 1_500)) == [.schedule(congested)])
        #expect(rig.step(.queued(event: true, outputBytes: 2_000)) == [])
        #expect(rig.step(.readEnded(lineEnded: true, partialLine: false)) == [.endTurn(then: .nothing)])
        // Above the soft limit is above the pause mark too: the peer is not read until it catches up.
        #expect(rig.step(.wrote(.blocked, outputBytes: 1_200, then: .nothing))
                == [.accountOutput(delta: 1_200), .setInterest(writable)])
        // It drained, then filled again: the first timer is stale, a second one runs.
        rig.asked.clockNow = .milliseconds(1_000)
        #expect(rig.step(.wrote(.wroteAll, outputBytes: 0, then: .nothing))
                == [.accountOutput(delta: -1_200), .notifyDrained, .setInterest(readable)])
        #expect(rig.step(.queued(event: true, outputBytes: 1_100)) == [.flush(then: .checkCongestion(event: true))])
        let again = ConnectionMachine.Timer.congestion(since: .milliseconds(1_000), stall: stall)
        #expect(rig.step(.wrote(.blocked, outputBytes: 1_100, then: .checkCongestion(event: true)))
                == [.accountOutput(delta: 1_100), .schedule(again), .setInterest(writable)])
        #expect(rig.step(.timerFired(congested)) == [])
        #expect(rig.step(.timerFired(again)) == [.accountOutput(delta: -1_100), .close(.stalled(bytes: 1_100, after: stall))])

        var flood = Rig(settings)
        _ = flood.step(.readingBegan)
        #expect(flood.step(.queued(event: false, outputBytes: 4_001)) == [.schedule(congested)])
        #expect(flood.step(.queued(event: true, outputBytes: 4_100))
                == [.close(.outputOverHardLimit(bytes: 4_100, limit: 4_000))])
    }

    /// The daemon stops: a connection with nothing owed closes at once; one with an answer owed closes once it
    /// is written, while the lines it had already sent are still served.
    @Test func stoppingDrainsWhatIsOwedThenCloses() {
        var idle = Rig()
        #expect(idle.step(.stopReading) == [.close(.drained)])

        var busy = Rig()
        _ = busy.step(.readingBegan)
        _ = busy.read(0)
        _ = busy.step(.requestStarted)
        _ = busy.step(.readEnded(lineEnded: true, partialLine: false))
        _ = busy.step(.wrote(.wroteAll, outputBytes: 0, then: .nothing))
        #expect(busy.step(.stopReading) == [.setInterest(0)])
        #expect(busy.step(.hungUp(error: false)) == [.close(.peerGone)])

        var late = Rig()
        late.asked.daemonIsStopping = true
        _ = late.step(.readingBegan)
        _ = late.read(0)
        _ = late.step(.requestStarted)
        _ = late.step(.readEnded(lineEnded: true, partialLine: false))
        _ = late.step(.wrote(.wroteAll, outputBytes: 0, then: .nothing))
        // Admitted while the daemon stops: it closes once its last answer is out, though it was never told to stop.
        #expect(late.step(.requestFinished) == [.close(.drained)])
    }

    /// A hang-up while the peer is read is left to the read (it sees the end of the stream); an error, or a
    /// hang-up of a peer no longer read, closes at once; so does a loop that cannot change what it watches.
    @Test func hangUpsErrorsAndAFailedInterestClose() {
        var rig = Rig()
        #expect(rig.step(.hungUp(error: false)) == [])
        #expect(rig.step(.hungUp(error: true)) == [.close(.peerGone)])

        var refused = Rig()
        #expect(refused.step(.interestFailed(errno: ENOMEM)) == [.close(.interestFailed(errno: ENOMEM))])
        var broken = Rig()
        _ = broken.step(.queued(event: false, outputBytes: 10))
        #expect(broken.step(.wrote(.failed(errno: ECONNRESET), outputBytes: 10, then: .checkCongestion(event: false)))
                == [.close(.writeFailed(errno: ECONNRESET))])
    }

    /// Back-pressure counts output reserved for answers still being built; releasing it opens the gate again.
    @Test func reservedOutputClosesTheGateAndItsReleaseOpensIt() {
        var settings = ServerSettings()
        settings.outputPauseBytes = 1_000
        settings.outputResumeBytes = 200
        var rig = Rig(settings)
        #expect(rig.step(.outputReserved(1_500)) == [.accountOutput(delta: 1_500)])
        _ = rig.step(.readingBegan)
        #expect(rig.read(0) == [])
        #expect(rig.machine.isReadPaused)
        _ = rig.step(.readEnded(lineEnded: true, partialLine: false))
        #expect(rig.step(.wrote(.wroteAll, outputBytes: 0, then: .nothing)) == [.setInterest(0)])
        #expect(rig.step(.outputReleased(1_500)) == [.accountOutput(delta: -1_500), .schedule(.heldLines)])
    }
}

@Suite("Connection machine: facts applied without a step")
struct ConnectionMachineShortcutTests {
    /// A script of a turn and what follows it: a request owed and answered, answers under and over the soft
    /// limit, one more answer while congestion is timed, the turn's end, and a late answer.
    private static let script: [ConnectionMachine.Fact] = [
        .requestStarted, .queued(event: false, outputBytes: 40), .requestFinished,
        .requestStarted, .queued(event: false, outputBytes: 1_500), .queued(event: false, outputBytes: 1_600),
        .queued(event: true, outputBytes: 1_700), .requestFinished,
        .readEnded(lineEnded: true, partialLine: false), .wrote(.wroteAll, outputBytes: 0, then: .nothing),
        .requestStarted, .queued(event: false, outputBytes: 30), .requestFinished,
    ]

    private static var settings: ServerSettings {
        var settings = ServerSettings()
        settings.outputSoftLimitBytes = 1_000
        settings.outputPauseBytes = 100_000
        return settings
    }

    /// Fed as the connection feeds them, the script asks for exactly the actions that stepping every fact asks
    /// for, and leaves the machine where stepping leaves it: the shortcut changes the cost, not the history.
    @Test func theHistoryIsTheOneEveryStepGives() {
        var stepped = Rig(Self.settings)
        var shortcut = Rig(Self.settings)
        #expect(stepped.step(.readingBegan) == [.beginTurn])
        #expect(shortcut.step(.readingBegan) == [.beginTurn])
        let served = stepped.read(0)
        #expect(shortcut.read(0) == served)
        var applied: [Int] = []
        for (index, fact) in Self.script.enumerated() {
            let expected = stepped.step(fact)
            let fed = shortcut.feedDuringActions(fact)
            if let actions = fed {
                #expect(actions == expected, "fact \(index): \(fact)")
            } else {
                #expect(expected == [], "fact \(index) was applied without a step but a step asks \(expected)")
                applied.append(index)
            }
            #expect(shortcut.machine.inFlight == stepped.machine.inFlight)
            #expect(shortcut.machine.interest == stepped.machine.interest)
        }
        // Inside the turn: both requests' three facts, and the answer queued while congestion was timed; the
        // answer that crossed the soft limit, the event, and everything after the turn were stepped.
        #expect(applied == [0, 1, 2, 3, 5, 7])
        let timer = ConnectionMachine.Timer.congestion(since: .zero, stall: Self.settings.outputStallTimeout)
        let afterStepping = stepped.step(.timerFired(timer))
        #expect(shortcut.step(.timerFired(timer)) == afterStepping)
    }

    /// Outside a turn no fact is applied without a step, and a closed machine takes none.
    @Test func outsideATurnEveryFactIsStepped() {
        var rig = Rig()
        for fact in Self.script {
            let applied = rig.machine.applyWithoutStep(fact)
            #expect(!applied, "\(fact)")
        }
        _ = rig.step(.readingBegan)
        _ = rig.step(.close)
        let appliedWhenClosed = rig.machine.applyWithoutStep(.requestStarted)
        #expect(!appliedWhenClosed)
    }
}

@Suite("Connection actions")
struct ConnectionActionsTests {
    @Test func moreThanTwoSpillInOrder() {
        let all: [ConnectionMachine.Action] = [.beginTurn, .endTurn(then: .nothing), .notifyDrained, .setInterest(1),
                                               .setInterest(2), .accountOutput(delta: 3), .close(.drained)]
        let actions = ConnectionActions(all)
        #expect(actions.count == 7)
        #expect(Array(actions) == all)
        #expect(actions == ConnectionActions(all))
        #expect(actions != ConnectionActions(Array(all.dropLast())))
        #expect(Array(ConnectionActions()) == [])
    }
}
