import RosterCore
import Testing
@testable import RosterRuntime

/// A small machine for the driver: it counts facts and asks for an answer, a timer, or both, so whole histories
/// can be written out and compared.
private struct EchoMachine {
    enum Fact: Equatable { case input(Int), answer(Int), timer(Int) }
    enum Action: Equatable { case ask(Int), answerLater(Int), wait(Int, Duration), log(String) }

    var history: [String] = []

    mutating func step(_ fact: Fact) -> [Action] {
        switch fact {
        case .input(let n) where n < 0:
            history.append("input \(n)")
            return [.answerLater(n), .log("after later \(n)")]
        case .input(let n):
            history.append("input \(n)")
            return [.ask(n), .log("after ask \(n)")]
        case .answer(let n):
            history.append("answer \(n)")
            return n == 2 ? [.wait(n, .milliseconds(500))] : []
        case .timer(let n):
            history.append("timer \(n)")
            return [.log("timer done \(n)")]
        }
    }
}

/// The machine, its driver, and a record of every action performed in order.
private final class EchoRig {
    var machine = EchoMachine()
    var performed: [String] = []
    var later: [() -> Void] = []
    let clock = ManualScheduler()
    private(set) var driver: MachineDriver<EchoMachine.Fact, EchoMachine.Action>!

    init() {
        driver = MachineDriver { [unowned self] fact in self.machine.step(fact) }
        driver.perform = { [unowned self] action, driver in
            switch action {
            case .ask(let n):
                performed.append("ask \(n)")
                // Answers before the call returns, as a storage reading from memory does.
                driver.feed(.answer(n))
            case .answerLater(let n):
                performed.append("later \(n)")
                later.append { driver.feed(.answer(n)) }
            case .wait(let n, let delay):
                performed.append("wait \(n)")
                _ = clock.schedule(at: clock.now + delay) { driver.feed(.timer(n)) }
            case .log(let text):
                performed.append(text)
            }
        }
    }
}

@Suite("Machine driver")
struct MachineDriverTests {
    @Test func aFactFedWhileActionsRunWaitsForTheRestOfTheStep() {
        let rig = EchoRig()
        rig.driver.feed(.input(1))
        // The answer came back inside `ask`, yet "after ask 1" went out first: it was the step's own action.
        #expect(rig.performed == ["ask 1", "after ask 1"])
        #expect(rig.machine.history == ["input 1", "answer 1"])
        #expect(rig.driver.pendingFacts == 0)
    }

    @Test func aWholeHistoryWithALaterAnswerAndATimerOnAManualClock() {
        let rig = EchoRig()
        rig.driver.feed(.input(-2))
        rig.driver.feed(.input(3))
        #expect(rig.performed == ["later -2", "after later -2", "ask 3", "after ask 3"])
        rig.later.removeFirst()()
        #expect(rig.machine.history == ["input -2", "input 3", "answer 3", "answer -2"])
        rig.driver.feed(.input(2))
        #expect(rig.performed.suffix(3) == ["ask 2", "after ask 2", "wait 2"])
        rig.clock.advance(by: .milliseconds(499))
        #expect(rig.machine.history.last == "answer 2")
        rig.clock.advance(by: .milliseconds(1))
        #expect(rig.machine.history.last == "timer 2")
        #expect(rig.performed.last == "timer done 2")
    }

    @Test func actionsGivenOutsideAStepRunBeforeTheFactsTheyCause() {
        let rig = EchoRig()
        rig.driver.perform([.ask(7), .log("first batch done")])
        #expect(rig.performed == ["ask 7", "first batch done"])
        #expect(rig.machine.history == ["answer 7"])
    }

    @Test func aRunInsideARunQueuesItsFactsForTheOuterOne() {
        let rig = EchoRig()
        rig.driver.run {
            rig.driver.feed(.input(4))
            #expect(rig.machine.history.isEmpty, "stepped inside the body")
            rig.driver.run { rig.driver.feed(.input(5)) }
            #expect(rig.machine.history.isEmpty)
        }
        #expect(rig.machine.history == ["input 4", "input 5", "answer 4", "answer 5"])
    }

    @Test func aStoppedDriverStepsNothingMoreAndPerformsNoMoreOfItsStep() {
        let rig = EchoRig()
        rig.driver.perform = { [unowned rig] action, driver in
            rig.performed.append("\(action)")
            if case .ask = action { driver.stop() }
        }
        rig.driver.feed(.input(1))
        #expect(rig.performed == ["ask(1)"], "the rest of the step ran after stop")
        rig.driver.feed(.input(2))
        rig.driver.perform([.log("late")])
        #expect(rig.machine.history == ["input 1"])
        #expect(rig.driver.isStopped)
    }

    @Test func anAnswerForAStoppedDriverIsDropped() {
        let rig = EchoRig()
        rig.driver.feed(.input(-1))
        rig.driver.stop()
        rig.later.removeFirst()()
        #expect(rig.machine.history == ["input -1"])
    }
}
