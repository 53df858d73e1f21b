@testable import RosterPostgres
import RosterCore
import RosterRuntime
import Testing

/// The connection machine's whole histories: every action, the timer's included, and the state with its data
/// after each fact, so that a missing, extra or reordered action fails as surely as a wrong one.
@Suite("PostgreSQL connection machine, whole histories")
struct PGConnectionStateMachineHistoryTests {
    typealias Machine = PGConnectionStateMachine
    typealias Action = Machine.Action
    typealias Driver = PGConnectionStateMachineTests.Driver

    static let ok = PGConnectionStateMachineTests.ok
    static let okResult = PGResult(rows: [], affectedRows: 1)
    static let readable = Machine.Watch(readable: true, writable: false)
    static let setupID: UInt64 = (1 << 62) + 1

    static func request(_ id: UInt64, _ kind: PGPipelineRequest.Kind, _ sql: [String], transaction: Bool = false)
        -> PGPipelineRequest {
        PGPipelineRequest(id: id, kind: kind, statements: sql.map { PGStatement($0) }, transaction: transaction)
    }

    static var setupRequest: PGPipelineRequest {
        PGPipelineRequest(id: setupID, kind: .setup, statements: PGConnectionStateMachineTests.setup, transaction: false)
    }

    @Test func aWholeLifeFromStartThroughRequestsAndAHeartbeatToAReconnect() {
        let driver = Driver()
        let t0 = driver.clock.now
        #expect(driver.feed { $0.start(now: $1) } == [.connect])
        #expect(driver.takeHistory() == [.connect, .setTimer(t0 + .seconds(5))])
        #expect(driver.machine.state == .connecting(deadline: t0 + .seconds(5), watching: nil))

        driver.feed { $0.connectPolled(.writing, now: $1) }
        driver.feed { $0.connectPolled(.reading, now: $1) }
        #expect(driver.takeHistory() == [.watch(readable: false, writable: true), .watch(readable: true, writable: false)])
        #expect(driver.machine.state == .connecting(deadline: t0 + .seconds(5), watching: Self.readable))

        // Connected at 1 s: the socket is already watched for reading, so no watch; the connect deadline's timer
        // (at 5 s) comes before the setup's (at 8 s) and is left to fire.
        driver.clock.advance(by: .seconds(1))
        driver.feed { $0.connectPolled(.ok, now: $1) }
        #expect(driver.takeHistory() == [.enterPipelineMode, .send(Self.setupRequest)])
        #expect(driver.machine.state == .settingUp(Machine.InFlight(Self.setupRequest, deadline: t0 + .seconds(8)),
                                                   watching: Self.readable))
        #expect(driver.machine.inFlightCount == 1 && !driver.machine.isReady)

        driver.feed { machine, _ in machine.flushed(outputPending: true) }
        driver.feed { machine, _ in machine.flushed(outputPending: false) }
        #expect(driver.takeHistory() == [.watch(readable: true, writable: true), .watch(readable: true, writable: false)])
        _ = driver.answer(Self.ok, .sync)
        #expect(driver.takeHistory() == [.ready])
        #expect(driver.machine.state == .idle(since: t0 + .seconds(1), watching: Self.readable))

        // The connect deadline's timer fires, finds nothing due, and sets the heartbeat's.
        driver.clock.advance(to: t0 + .seconds(5))
        #expect(driver.takeHistory() == [.setTimer(t0 + .seconds(6))])

        driver.clock.advance(to: t0 + .milliseconds(5_500))
        driver.feed { $0.enqueue(id: 1, statements: [PGStatement("A")], transaction: false, now: $1) }
        driver.feed { $0.enqueue(id: 2, statements: [PGStatement("B"), PGStatement("C")], transaction: true, now: $1) }
        #expect(driver.takeHistory() == [.send(Self.request(1, .caller, ["A"])),
                                         .send(Self.request(2, .caller, ["B", "C"], transaction: true))])
        guard case .busy(let pipeline, let watching) = driver.machine.state else {
            Issue.record("not busy: \(driver.machine.state)")
            return
        }
        #expect(pipeline.all.map(\.request.id) == [1, 2] && watching == Self.readable)
        #expect(pipeline.earliestDeadline == t0 + .milliseconds(12_500))

        // The heartbeat's timer fires on a busy connection: no heartbeat, the deadline's timer instead.
        driver.clock.advance(to: t0 + .seconds(6))
        #expect(driver.takeHistory() == [.setTimer(t0 + .milliseconds(12_500))])

        _ = driver.answer(Self.ok, .sync)
        #expect(driver.takeHistory() == [.deliver(id: 1, .success([Self.okResult]))])
        _ = driver.answer(Self.ok, Self.ok, .sync)
        // Idle again: the heartbeat is due before the armed deadline, so the timer moves forward.
        #expect(driver.takeHistory() == [.deliver(id: 2, .success([Self.okResult, Self.okResult])),
                                         .setTimer(t0 + .seconds(11))])
        #expect(driver.machine.state == .idle(since: t0 + .seconds(6), watching: Self.readable))

        driver.clock.advance(to: t0 + .seconds(11))
        #expect(driver.takeHistory() == [.send(Self.request(Self.setupID + 1, .heartbeat, ["SELECT 1"])),
                                         .setTimer(t0 + .seconds(18))])

        driver.clock.advance(to: t0 + .seconds(12))
        driver.feed { $0.failed(reason: "server closed the connection", now: $1) }
        let retryAt = t0 + .milliseconds(12_100)
        #expect(driver.takeHistory() == [.close, .broke(retryAt: retryAt, reason: "server closed the connection"),
                                         .setTimer(retryAt)], "a heartbeat in flight has no caller to answer")
        #expect(driver.machine.state == .broken(retryAt: retryAt))
        #expect(driver.machine.consecutiveFailures == 1)

        driver.clock.advance(to: retryAt)
        #expect(driver.takeHistory() == [.connect, .setTimer(retryAt + .seconds(5))])
        #expect(driver.machine.state == .connecting(deadline: retryAt + .seconds(5), watching: nil))
    }

    /// A caller's completion that sends again (as the pool's does) is stepped once the delivering step has
    /// performed all of its actions: its send goes behind, and a refusal comes after the failure it follows.
    @Test func aFactFedFromADeliveryWaitsForTheRestOfTheStep() {
        let driver = Driver()
        driver.connect()
        driver.feed { $0.enqueue(id: 1, statements: [PGStatement("A")], transaction: false, now: $1) }
        driver.feed { $0.enqueue(id: 2, statements: [PGStatement("B")], transaction: false, now: $1) }
        _ = driver.takeHistory()
        driver.onDeliver = { id in
            let next = id + 2
            guard next <= 4 else { return }
            let sent = driver.feed { $0.enqueue(id: next, statements: [PGStatement("N")], transaction: false, now: $1) }
            #expect(sent.isEmpty, "stepped inside the delivery")
        }
        _ = driver.answer(Self.ok, .sync)
        #expect(driver.takeHistory() == [.deliver(id: 1, .success([Self.okResult])), .send(Self.request(3, .caller, ["N"]))])
        guard case .busy(let pipeline, _) = driver.machine.state else {
            Issue.record("not busy: \(driver.machine.state)")
            return
        }
        #expect(pipeline.all.map(\.request.id) == [2, 3])

        driver.feed { $0.failed(reason: "gone", now: $1) }
        let retryAt = driver.clock.now + .milliseconds(100)
        #expect(driver.takeHistory() == [
            .deliver(id: 2, .failure(.unavailable(retryAfterMs: 100))),
            .deliver(id: 3, .failure(.unavailable(retryAfterMs: 100))),
            .close, .broke(retryAt: retryAt, reason: "gone"), .setTimer(retryAt),
            // Request 4, sent from request 2's completion, is refused after the failure, not inside it.
            .deliver(id: 4, .failure(.unavailable(retryAfterMs: 100))),
        ])
    }

    @Test func aSetupThatIsNeverAnsweredStallsTheConnection() {
        let driver = Driver()
        let t0 = driver.clock.now
        driver.feed { $0.start(now: $1) }
        driver.feed { $0.connectPolled(.ok, now: $1) }
        #expect(driver.takeHistory() == [.connect, .setTimer(t0 + .seconds(5)), .enterPipelineMode,
                                         .watch(readable: true, writable: false), .send(Self.setupRequest)])
        // The connect deadline no longer applies once connected: the setup has a request's deadline.
        driver.clock.advance(to: t0 + .seconds(5))
        #expect(driver.takeHistory() == [.setTimer(t0 + .seconds(7))])
        #expect(driver.machine.phase == .settingUp)
        driver.clock.advance(to: t0 + .seconds(7))
        let retryAt = t0 + .milliseconds(7_100)
        #expect(driver.takeHistory() == [.stalled, .close, .broke(retryAt: retryAt, reason: "no answer in time"),
                                         .setTimer(retryAt)])
    }

    /// Each state with the facts that do not apply to it: nothing comes out, and the state with its data is as
    /// it was.
    @Test func factsThatDoNotApplyToAStateChangeNothing() {
        let polls: [Machine.ConnectPoll] = [.reading, .writing, .ok, .failed]
        func unchanged(_ driver: Driver, _ label: String, _ facts: [(String, Driver.Fact)]) {
            _ = driver.takeHistory()
            let before = driver.machine.state
            for (name, fact) in facts {
                driver.feed(fact)
                #expect(driver.takeHistory() == [], "\(label): \(name)")
                #expect(driver.machine.state == before, "\(label): \(name)")
            }
        }
        let start: (String, Driver.Fact) = ("start", { $0.start(now: $1) })
        let pollFacts: [(String, Driver.Fact)] = polls.map { poll in ("poll \(poll)", { $0.connectPolled(poll, now: $1) }) }
        let flush: (String, Driver.Fact) = ("flushed", { machine, _ in machine.flushed(outputPending: true) })
        let chore: (String, Driver.Fact) = ("chore", { $0.enqueueChore([PGStatement("ROLLBACK")], now: $1) })
        let failed: (String, Driver.Fact) = ("failed", { $0.failed(reason: "x", now: $1) })
        let result: (String, Driver.Fact) = ("result", { $0.received(.sync, now: $1) })
        let stop: (String, Driver.Fact) = ("stop", { $0.stop(now: $1) })
        let timer: (String, Driver.Fact) = ("timer", { $0.timerFired(now: $1) })

        let stopped = Driver()
        unchanged(stopped, "stopped", [stop, flush, chore, failed, result, timer] + pollFacts)

        let connecting = Driver()
        connecting.feed { $0.start(now: $1) }
        unchanged(connecting, "connecting", [start, flush, chore])

        let settingUp = Driver()
        settingUp.feed { $0.start(now: $1) }
        settingUp.feed { $0.connectPolled(.ok, now: $1) }
        unchanged(settingUp, "settingUp", [start, chore] + pollFacts)

        let idle = Driver()
        idle.connect()
        unchanged(idle, "idle", [start] + pollFacts)

        let busy = Driver()
        busy.connect()
        busy.feed { $0.enqueue(id: 1, statements: [PGStatement("A")], transaction: false, now: $1) }
        unchanged(busy, "busy", [start] + pollFacts)

        let broken = Driver()
        broken.connect()
        broken.feed { $0.failed(reason: "gone", now: $1) }
        unchanged(broken, "broken", [start, flush, chore, failed, result] + pollFacts)
    }

    /// Refused at once, whatever the state that is not ready, and the state is left as it was.
    @Test func aRequestWhileNotReadyIsRefusedAndChangesNothing() {
        func refused(_ driver: Driver, _ label: String, retryAfterMs: Int64) {
            _ = driver.takeHistory()
            let before = driver.machine.state
            driver.feed { $0.enqueue(id: 9, statements: [PGStatement("A")], transaction: false, now: $1) }
            #expect(driver.takeHistory() == [.deliver(id: 9, .failure(.unavailable(retryAfterMs: retryAfterMs)))], "\(label)")
            #expect(driver.machine.state == before, "\(label)")
        }
        refused(Driver(), "stopped", retryAfterMs: 100)
        let connecting = Driver()
        connecting.feed { $0.start(now: $1) }
        refused(connecting, "connecting", retryAfterMs: 100)
        let settingUp = Driver()
        settingUp.feed { $0.start(now: $1) }
        settingUp.feed { $0.connectPolled(.ok, now: $1) }
        refused(settingUp, "settingUp", retryAfterMs: 100)
        let broken = Driver()
        broken.connect()
        broken.feed { $0.failed(reason: "gone", now: $1) }
        broken.clock.advance(by: .milliseconds(40))
        refused(broken, "broken", retryAfterMs: 60)
    }

    /// Stopping answers the callers in flight (never the connection's own work), closes what is open, and clears
    /// the timer.
    @Test func stoppingFromEachState() {
        let connecting = Driver()
        connecting.feed { $0.start(now: $1) }
        _ = connecting.takeHistory()
        connecting.feed { $0.stop(now: $1) }
        #expect(connecting.takeHistory() == [.close, .setTimer(nil)])

        let settingUp = Driver()
        settingUp.feed { $0.start(now: $1) }
        settingUp.feed { $0.connectPolled(.ok, now: $1) }
        _ = settingUp.takeHistory()
        settingUp.feed { $0.stop(now: $1) }
        #expect(settingUp.takeHistory() == [.close, .setTimer(nil)])

        let idle = Driver()
        idle.connect()
        idle.feed { $0.stop(now: $1) }
        #expect(idle.takeHistory() == [.close, .setTimer(nil)])

        let busy = Driver()
        busy.connect()
        busy.feed { $0.enqueueChore([PGStatement("ROLLBACK")], now: $1) }
        busy.feed { $0.enqueue(id: 5, statements: [PGStatement("A")], transaction: false, now: $1) }
        _ = busy.takeHistory()
        busy.feed { $0.stop(now: $1) }
        #expect(busy.takeHistory() == [.deliver(id: 5, .failure(.unavailable(retryAfterMs: 100))), .close, .setTimer(nil)])

        let broken = Driver()
        broken.connect()
        broken.feed { $0.failed(reason: "gone", now: $1) }
        _ = broken.takeHistory()
        broken.feed { $0.stop(now: $1) }
        #expect(broken.takeHistory() == [.setTimer(nil)], "already closed")
        #expect(broken.machine.state == .stopped)
    }

    /// The backoff's exponent is the machine's, not a state's: a stop and a start do not forgive an outage.
    @Test func aStopAndAStartKeepTheBackoff() {
        let driver = Driver()
        driver.feed { $0.start(now: $1) }
        driver.feed { $0.connectPolled(.failed, now: $1) }
        driver.clock.advance(by: .milliseconds(100))
        driver.feed { $0.connectPolled(.failed, now: $1) }
        #expect(driver.machine.consecutiveFailures == 2)
        driver.feed { $0.stop(now: $1) }
        driver.feed { $0.start(now: $1) }
        _ = driver.takeHistory()
        driver.feed { $0.connectPolled(.failed, now: $1) }
        let retryAt = driver.clock.now + .milliseconds(400)
        #expect(driver.takeHistory() == [.close, .broke(retryAt: retryAt, reason: "connect failed"), .setTimer(retryAt)])
    }

    /// A heartbeat that fails breaks the connection, and what was sent behind it is answered `.unavailable`.
    @Test func aFailedHeartbeatBreaksTheConnectionAndAnswersWhatIsBehindIt() {
        let driver = Driver()
        driver.connect()
        driver.clock.advance(by: .seconds(5))
        driver.feed { $0.enqueue(id: 1, statements: [PGStatement("A")], transaction: false, now: $1) }
        _ = driver.takeHistory()
        _ = driver.answer(.failed(.server(sqlState: "57P01", message: "terminating")), .sync)
        let retryAt = driver.clock.now + .milliseconds(100)
        #expect(driver.takeHistory() == [.deliver(id: 1, .failure(.unavailable(retryAfterMs: 100))), .close,
                                         .broke(retryAt: retryAt, reason: "heartbeat failed: server_57P01"),
                                         .setTimer(retryAt)])
    }
}
