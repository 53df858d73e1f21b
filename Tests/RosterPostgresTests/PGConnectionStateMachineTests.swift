@testable import RosterPostgres
import RosterCore
import RosterRuntime
import Testing

/// The connection machine without a server: facts in, actions out, time on a manual clock.
@Suite("PostgreSQL connection machine")
struct PGConnectionStateMachineTests {
    typealias Action = PGConnectionStateMachine.Action

    static let timing = PGConnectionStateMachine.Timing(connectTimeout: .seconds(5), requestTimeout: .seconds(7),
                                                        heartbeat: .seconds(5), reconnectMin: .milliseconds(100),
                                                        reconnectMax: .seconds(2))
    static let setup = [PGStatement("SET statement_timeout = 5000")]

    /// Drives a machine as `PGConnection` does, through a `MachineDriver`, with its timer on a `ManualScheduler`.
    final class Driver {
        typealias Fact = (inout PGConnectionStateMachine, Instant) -> [Action]

        var machine: PGConnectionStateMachine
        let clock = ManualScheduler()
        private var timer: Scheduled?
        private var runner: MachineDriver<Fact, Action>!
        /// Every action but the timer's, in order, since the last `take()`.
        private var actions: [Action] = []
        /// Every action, the timer's too, in order, since the last `takeHistory()`.
        private var history: [Action] = []
        /// Called as each answer is delivered, as a caller's completion is: it may feed facts of its own.
        var onDeliver: ((UInt64) -> Void)?

        init(random: @escaping () -> Double = { 1 }) {
            machine = PGConnectionStateMachine(timing: PGConnectionStateMachineTests.timing,
                                               setup: PGConnectionStateMachineTests.setup, random: random)
            runner = MachineDriver { [unowned self] fact in fact(&self.machine, self.clock.now) }
            runner.perform = { [unowned self] action, runner in
                history.append(action)
                guard case .setTimer(let deadline) = action else {
                    actions.append(action)
                    if case .deliver(let id, _) = action { onDeliver?(id) }
                    return
                }
                timer?.cancel()
                timer = deadline.map { clock.schedule(at: $0) { runner.feed { $0.timerFired(now: $1) } } }
            }
        }

        @discardableResult
        func feed(_ fact: @escaping Fact) -> [Action] {
            let before = actions.count
            runner.feed(fact)
            return Array(actions[before...])
        }

        /// Every action since the last call, the timer's included, and forgets them (and `take()`'s).
        func takeHistory() -> [Action] {
            defer { history.removeAll(); actions.removeAll() }
            return history
        }

        /// The actions since the last call (those the timer caused included), the timer's own left out.
        func take() -> [Action] {
            defer { actions.removeAll(); history.removeAll() }
            return actions
        }

        /// Start, connect and finish the setup: the machine is idle and ready.
        func connect() {
            feed { $0.start(now: $1) }
            feed { $0.connectPolled(.writing, now: $1) }
            feed { $0.connectPolled(.ok, now: $1) }
            feed { machine, _ in machine.flushed(outputPending: false) }
            feed { $0.received(.done(PGResult(rows: [], affectedRows: 0)), now: $1) }
            feed { $0.received(.sync, now: $1) }
            _ = take()
        }

        func answer(_ outcomes: LibPQ.Outcome...) -> [Action] {
            let before = actions.count
            for outcome in outcomes { feed { $0.received(outcome, now: $1) } }
            let produced = Array(actions[before...])
            return produced
        }
    }

    static let ok = LibPQ.Outcome.done(PGResult(rows: [], affectedRows: 1))

    static func sent(_ actions: [Action]) -> [PGPipelineRequest] {
        actions.compactMap { if case .send(let request) = $0 { request } else { nil } }
    }

    static func delivered(_ actions: [Action]) -> [(UInt64, Result<[PGResult], PGFailure>)] {
        actions.compactMap { if case .deliver(let id, let result) = $0 { (id, result) } else { nil } }
    }

    @Test func connectsThenRunsTheSetupBeforeItIsReady() {
        let driver = Driver()
        #expect(driver.feed { $0.start(now: $1) } == [.connect])
        #expect(driver.feed { $0.connectPolled(.writing, now: $1) } == [.watch(readable: false, writable: true)])
        #expect(driver.feed { $0.connectPolled(.reading, now: $1) } == [.watch(readable: true, writable: false)])
        // Again, though unchanged: libpq may be on another socket by now.
        #expect(driver.feed { $0.connectPolled(.reading, now: $1) } == [.watch(readable: true, writable: false)])
        let connected = driver.feed { $0.connectPolled(.ok, now: $1) }
        #expect(connected.first == .enterPipelineMode)
        #expect(Self.sent(connected).map(\.statements) == [Self.setup])
        #expect(Self.sent(connected).map(\.kind) == [.setup])
        #expect(!driver.machine.isReady, "ready before the setup has run")
        // A caller asking now is refused at once rather than queued behind the setup.
        let early = driver.feed { $0.enqueue(id: 1, statements: [PGStatement("SELECT 1")], transaction: false, now: $1) }
        #expect(Self.delivered(early).map(\.0) == [1])
        #expect(driver.answer(Self.ok, .sync) == [.ready])
        #expect(driver.machine.phase == .idle)
    }

    @Test func pipelinedRequestsAreAnsweredInOrderEachOnItsOwnSyncs() throws {
        let driver = Driver()
        driver.connect()
        let sent = driver.feed { $0.enqueue(id: 1, statements: [PGStatement("A"), PGStatement("B")], transaction: false, now: $1) }
            + driver.feed { $0.enqueue(id: 2, statements: [PGStatement("C"), PGStatement("D")], transaction: true, now: $1) }
        #expect(Self.sent(sent).map(\.segments) == [2, 1], "one Sync per statement alone, one per transaction")
        #expect(driver.machine.phase == .busy)
        // The first statement of request 1 fails: its second still runs (its own segment), the first failure is answered.
        let first = driver.answer(.failed(.server(sqlState: "23505", message: "dup")), .sync, Self.ok, .sync)
        let second = driver.answer(Self.ok, Self.ok, .sync)
        let answers = Self.delivered(first + second)
        #expect(answers.map(\.0) == [1, 2])
        #expect(throws: PGFailure.server(sqlState: "23505", message: "dup")) { try answers[0].1.get() }
        #expect(try answers[1].1.get().count == 2)
        #expect(driver.machine.phase == .idle)
    }

    @Test func aFailedTransactionAnswersItsFirstFailure() throws {
        let driver = Driver()
        driver.connect()
        driver.feed { $0.enqueue(id: 7, statements: [PGStatement("A"), PGStatement("B"), PGStatement("C")], transaction: true, now: $1) }
        let answers = Self.delivered(driver.answer(Self.ok, .failed(.timeout), .aborted, .sync))
        #expect(answers.count == 1)
        #expect(throws: PGFailure.timeout) { try answers[0].1.get() }
    }

    @Test func writableIsWatchedOnlyWhileOutputIsPending() {
        let driver = Driver()
        driver.connect()
        driver.feed { $0.enqueue(id: 1, statements: [PGStatement("A")], transaction: false, now: $1) }
        #expect(driver.feed { machine, _ in machine.flushed(outputPending: true) } == [.watch(readable: true, writable: true)])
        #expect(driver.feed { machine, _ in machine.flushed(outputPending: true) } == [])
        #expect(driver.feed { machine, _ in machine.flushed(outputPending: false) } == [.watch(readable: true, writable: false)])
    }

    @Test func aBrokenConnectionAnswersWhatIsInFlightAndReconnectsAfterTheBackoff() throws {
        let driver = Driver()
        driver.connect()
        driver.feed { $0.enqueue(id: 1, statements: [PGStatement("INSERT")], transaction: false, now: $1) }
        driver.feed { $0.enqueue(id: 2, statements: [PGStatement("INSERT")], transaction: false, now: $1) }
        let broke = driver.feed { $0.failed(reason: "server closed the connection", now: $1) }
        let answers = Self.delivered(broke)
        #expect(answers.map(\.0) == [1, 2], "in flight when it broke: answered, never resent")
        for (_, result) in answers {
            guard case .failure(.unavailable(let retry)) = result else { Issue.record("not unavailable: \(result)"); continue }
            #expect(retry > 0)
        }
        #expect(broke.contains(.close))
        #expect(!broke.contains(.stalled), "a closed connection is a failure, not a server that stopped answering")
        #expect(Self.sent(broke).isEmpty)
        // The first retry waits reconnectMin (the jitter here takes the whole wait), and not a moment less.
        driver.clock.advance(by: .milliseconds(99))
        #expect(driver.take().contains(.connect) == false)
        driver.clock.advance(by: .milliseconds(1))
        #expect(driver.take() == [.connect])
    }

    @Test func failedConnectsBackOffExponentiallyUpToTheCapWithJitterBelowIt() throws {
        var draws: [Double] = [1, 1, 1, 1, 1, 1, 0, 0.5]
        let driver = Driver(random: { draws.isEmpty ? 1 : draws.removeFirst() })
        driver.feed { $0.start(now: $1) }
        var waits: [Int64] = []
        for _ in 0..<8 {
            let failedAt = driver.clock.now
            driver.feed { $0.connectPolled(.failed, now: $1) }
            _ = driver.take()
            var waited: Int64 = 0
            while !driver.take().contains(.connect) {
                driver.clock.advance(by: .milliseconds(1))
                waited = (driver.clock.now - failedAt).milliseconds
                guard waited < 10_000 else { break }
            }
            waits.append(waited)
        }
        // 100, 200, 400, 800, 1600, then capped at 2000; then jitter: half the cap at 0, three quarters at 0.5.
        #expect(waits == [100, 200, 400, 800, 1_600, 2_000, 1_000, 1_500])
        // A successful connect starts the backoff over.
        driver.feed { $0.connectPolled(.ok, now: $1) }
        _ = driver.answer(Self.ok, .sync)
        #expect(driver.machine.consecutiveFailures == 0)
    }

    @Test func aConnectThatNeverCompletesTimesOut() {
        let driver = Driver()
        driver.feed { $0.start(now: $1) }
        driver.feed { $0.connectPolled(.writing, now: $1) }
        driver.clock.advance(by: .milliseconds(4_999))
        #expect(driver.machine.phase == .connecting)
        driver.clock.advance(by: .milliseconds(1))
        guard case .broken = driver.machine.state else { Issue.record("still \(driver.machine.state)"); return }
        #expect(driver.take().contains(.close))
    }

    @Test func aRequestUnansweredPastItsDeadlineTimesOutAndTheConnectionIsDropped() throws {
        let driver = Driver()
        driver.connect()
        driver.feed { $0.enqueue(id: 1, statements: [PGStatement("SELECT pg_sleep(100)")], transaction: false, now: $1) }
        driver.clock.advance(by: .seconds(3))
        driver.feed { $0.enqueue(id: 2, statements: [PGStatement("SELECT 1")], transaction: false, now: $1) }
        driver.clock.advance(by: .seconds(4))
        let actions = driver.take()
        let answers = Self.delivered(actions)
        #expect(answers.map(\.0) == [1, 2])
        #expect(throws: PGFailure.timeout) { try answers[0].1.get() }
        guard case .failure(.unavailable) = answers[1].1 else { Issue.record("behind a hung one: \(answers[1].1)"); return }
        #expect(actions.contains(.close))
        // Said before any caller is answered: whoever sends to this server can stop now.
        let stalled = try #require(actions.firstIndex(of: .stalled))
        #expect(stalled < (actions.firstIndex { if case .deliver = $0 { true } else { false } } ?? actions.endIndex))
    }

    @Test func anIdleConnectionSendsAHeartbeatAndOneUnansweredBreaksIt() throws {
        let driver = Driver()
        driver.connect()
        driver.clock.advance(by: .milliseconds(4_999))
        #expect(Self.sent(driver.take()).isEmpty)
        driver.clock.advance(by: .milliseconds(1))
        let heartbeat = Self.sent(driver.take())
        #expect(heartbeat.map(\.kind) == [.heartbeat])
        // Answered: idle again, and the next heartbeat is due a full period later; nothing is delivered.
        #expect(Self.delivered(driver.answer(Self.ok, .sync)).isEmpty)
        #expect(driver.machine.phase == .idle)
        driver.clock.advance(by: .seconds(5))
        #expect(Self.sent(driver.take()).map(\.kind) == [.heartbeat])
        // This one is never answered: the connection is dead, found without a caller losing a request.
        driver.clock.advance(by: .seconds(7))
        let actions = driver.take()
        #expect(actions.contains(.close))
        #expect(actions.contains { if case .broke = $0 { true } else { false } })
        #expect(actions.first == .stalled)
        #expect(Self.delivered(actions).isEmpty)
    }

    @Test func busyConnectionsSendNoHeartbeat() {
        let driver = Driver()
        driver.connect()
        driver.feed { $0.enqueue(id: 1, statements: [PGStatement("A")], transaction: false, now: $1) }
        _ = driver.take()
        driver.clock.advance(by: .seconds(6))
        #expect(Self.sent(driver.take()).isEmpty)
    }

    @Test func aFailedSetupBreaksTheConnection() {
        let driver = Driver()
        driver.feed { $0.start(now: $1) }
        driver.feed { $0.connectPolled(.ok, now: $1) }
        let actions = driver.answer(.failed(.server(sqlState: "42501", message: "denied")), .sync)
        #expect(!actions.contains(.ready))
        #expect(actions.contains(.close))
    }

    @Test func stoppingAnswersWhatIsInFlightAndClosesForGood() throws {
        let driver = Driver()
        driver.connect()
        driver.feed { $0.enqueue(id: 3, statements: [PGStatement("A")], transaction: false, now: $1) }
        let actions = driver.feed { $0.stop(now: $1) }
        #expect(Self.delivered(actions).map(\.0) == [3])
        #expect(actions.contains(.close))
        _ = driver.take()
        driver.clock.advance(by: .seconds(60))
        #expect(driver.take().isEmpty, "a stopped connection neither reconnects nor beats")
        #expect(driver.machine.phase == .stopped)
    }

    @Test func aResultNobodyAskedForBreaksTheConnection() {
        let driver = Driver()
        driver.connect()
        #expect(driver.feed { $0.received(Self.ok, now: $1) }.contains(.close))
    }
}
