@testable import RosterPostgres
import Testing

/// One user's contact operations run one at a time, in the order asked, another user's alongside; past the
/// user's share of waiting turns, a call is refused at once.
@Suite("Contact turns")
struct ContactTurnsTests {
    @Test func oneUsersOperationsRunInOrderAndAnotherUsersAlongside() {
        let turns = ContactTurns(limitPerUser: 8)
        var started: [String] = []
        var finish: [String: () -> Void] = [:]
        for name in ["a1", "a2", "a3"] {
            #expect(turns.enqueue(1) { done in started.append(name); finish[name] = done })
        }
        #expect(turns.enqueue(2) { done in started.append("b1"); finish["b1"] = done })
        #expect(started == ["a1", "b1"])
        finish["a1"]?()
        // Handing the turn on twice does not start two.
        finish["a1"]?()
        #expect(started == ["a1", "b1", "a2"])
        finish["a2"]?()
        finish["a3"]?()
        finish["b1"]?()
        #expect(turns.activeUsers == 0)
    }

    @Test func pastItsShareAUserIsRefusedAndNothingOfTheRefusedRuns() {
        let turns = ContactTurns(limitPerUser: 2)
        var ran: [Int] = []
        var finish: [() -> Void] = []
        for index in 0..<4 {
            let queued = turns.enqueue(7) { done in ran.append(index); finish.append(done) }
            // The running one and two waiting; the fourth is refused.
            #expect(queued == (index < 3), "\(index)")
        }
        while let next = finish.first {
            finish.removeFirst()
            next()
        }
        #expect(ran == [0, 1, 2])
        // Once the user's turns are done, there is room again.
        #expect(turns.enqueue(7) { done in ran.append(9); done() })
        #expect(ran == [0, 1, 2, 9])
        #expect(turns.activeUsers == 0)
    }
}
