import RosterCore
import Testing
@testable import RosterRuntime

@Suite("Keyed timers")
struct KeyedTimersTests {
    /// Setting a key again replaces its timer: only the newest fires, once, and the key is then forgotten.
    @Test func aKeySetAgainFiresOnlyItsNewestTimer() {
        let scheduler = ManualScheduler()
        let timers = KeyedTimers<String>(on: scheduler)
        var fired: [String] = []
        timers.set("debounce", at: scheduler.now + .milliseconds(100)) { fired.append("first") }
        timers.set("debounce", at: scheduler.now + .milliseconds(300)) { fired.append("second") }
        timers.set("other", at: scheduler.now + .milliseconds(200)) { fired.append("other") }
        #expect(timers.count == 2)
        scheduler.advance(by: .milliseconds(250))
        #expect(fired == ["other"])
        #expect(timers.count == 1)
        scheduler.advance(by: .milliseconds(100))
        #expect(fired == ["other", "second"])
        #expect(timers.count == 0)
    }

    /// A cancelled key, or every key at once, never fires.
    @Test func cancelledTimersNeverFire() {
        let scheduler = ManualScheduler()
        let timers = KeyedTimers<Int>(on: scheduler)
        var fired: [Int] = []
        for key in 1...3 { timers.set(key, at: scheduler.now + .milliseconds(key * 10)) { fired.append(key) } }
        timers.cancel(2)
        scheduler.advance(by: .milliseconds(15))
        #expect(fired == [1])
        timers.cancelAll()
        #expect(timers.count == 0)
        scheduler.advance(by: .seconds(1))
        #expect(fired == [1])
    }
}
