import RosterCore
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Testing
@testable import RosterServer

/// The contacts form on a manual clock, with the seed's real 300 ms throttle and in-memory storage: every test
/// asserts the whole history of `results` events, so a duplicate, a stale list or a missing one all fail.
@Suite("Contacts form runner")
struct ContactsFormRunnerTests {
    /// One `results` event: when it went out (ms after the start), for which query, the names it carried and the
    /// total.
    struct Results: Equatable, CustomStringConvertible {
        let atMs: Int64
        let query: String
        let names: [String]
        let total: Int

        var description: String { "@\(atMs) \"\(query)\" \(names) of \(total)" }
    }

    final class RecordingSink: ContactsFormSink {
        let scheduler: ManualScheduler
        var peerIsBehind = false
        private(set) var history: [Results] = []

        init(scheduler: ManualScheduler) { self.scheduler = scheduler }

        func results(query: String, items: [FoundContact], total: Int) {
            history.append(Results(atMs: scheduler.now.nanoseconds / 1_000_000, query: query,
                                   names: items.map(\.contact.name), total: total))
        }
    }

    /// A user with contacts, a form runner for them, and the clock, the sink and the storage to drive it.
    final class Bench {
        let scheduler = ManualScheduler()
        let contacts: ContactsFixture
        let sink: RecordingSink
        let user: AccountID
        var throttle = Policy.seed.throttle
        private(set) var form: ContactsFormRunner!
        let logged = KeptLog()

        init(_ names: [String] = ["Alice Smith", "Albert Jones", "Bob Brown"]) {
            sink = RecordingSink(scheduler: scheduler)
            contacts = ContactsFixture(holdingLoads: false)
            user = contacts.account("owner")
            contacts.seed(user, names)
            form = ContactsFormRunner(userID: user, environment: ContactsFormEnvironment(
                scheduler: scheduler, contacts: contacts.service, sink: sink, throttle: { [unowned self] in self.throttle },
                charge: QueueCharge(payer: .account(user), connection: 1), logger: Logger(level: .debug, sink: logged)))
        }

        var storage: InMemoryStorage { contacts.storage }
        var interposed: InterposedStorage? { contacts.interposed }
        var history: [Results] { sink.history }

        func type(_ query: String) {
            _ = try? form.input(field: .query, value: query)
            form.performPendingInput()
        }

        func advance(toMs ms: Int64) { scheduler.advance(to: .milliseconds(ms)) }

        /// Writes `name` the way another session would, through the service, which tells the form.
        func add(_ name: String) {
            contacts.add(user, name, into: Answers<Contact>())
            form.contactsChanged()
        }
    }

    private static let everyone = ["Albert Jones", "Alice Smith", "Bob Brown"]

    @Test func openingListsEverythingAndTypingIsThrottledToTheLatestQuery() {
        let bench = Bench()
        bench.form.opened()
        bench.advance(toMs: 10)
        bench.type("a")
        bench.advance(toMs: 100)
        bench.type("al")
        bench.advance(toMs: 200)
        bench.type("ali")
        // The window opened by "a" at 10 ms ends at 310: nothing before, then the latest query only.
        bench.advance(toMs: 309)
        #expect(bench.history == [
            Results(atMs: 0, query: "", names: Self.everyone, total: 3),
            Results(atMs: 10, query: "a", names: ["Albert Jones", "Alice Smith"], total: 2),
        ])
        bench.advance(toMs: 310)
        bench.advance(toMs: 2_000)
        #expect(bench.history.dropFirst(2) == [Results(atMs: 310, query: "ali", names: ["Alice Smith"], total: 1)])
        #expect(bench.scheduler.pendingCount == 0)
    }

    @Test func aBurstOfChangesIsOneRefreshPerWindowEndingWithTheFinalList() {
        let bench = Bench(["Ann"])
        bench.form.opened()
        bench.advance(toMs: 50)
        bench.add("Ben")
        for index in 1...5 {
            bench.advance(toMs: 50 + Int64(index) * 20)
            bench.add("Cat \(index)")
        }
        bench.advance(toMs: 1_000)
        #expect(bench.history == [
            Results(atMs: 0, query: "", names: ["Ann"], total: 1),
            Results(atMs: 50, query: "", names: ["Ann", "Ben"], total: 2),
            Results(atMs: 350, query: "", names: ["Ann", "Ben", "Cat 1", "Cat 2", "Cat 3", "Cat 4", "Cat 5"], total: 7),
        ])
    }

    /// A result that answers after a newer query's is dropped: a stale list never lands after a fresh one, and the
    /// older read, if it has not started, is called off.
    @Test(arguments: [(true, false), (false, false), (true, true), (false, true)])
    func aResultThatAnswersAfterANewerQueryIsDropped(newerAnswersFirst: Bool, readStartedBeforeCancel: Bool) {
        let bench = Bench()
        bench.form.opened()
        bench.storage.answering = .onRelease
        bench.interposed?.readsStartedBeforeCancel = readStartedBeforeCancel
        bench.advance(toMs: 400)
        bench.type("bo")
        bench.advance(toMs: 800)
        bench.type("al")
        #expect(bench.storage.pending == [.readContacts, .readContacts])
        if newerAnswersFirst {
            bench.storage.release(at: 1)
            bench.storage.releaseNext()
        } else {
            bench.storage.releaseNext()
            bench.storage.releaseNext()
        }
        bench.advance(toMs: 2_000)
        #expect(bench.history == [
            Results(atMs: 0, query: "", names: Self.everyone, total: 3),
            Results(atMs: 800, query: "al", names: ["Albert Jones", "Alice Smith"], total: 2),
        ])
        #expect(bench.logged.messages.isEmpty, "the cancelled read is not a failure: \(bench.logged.messages)")
    }

    /// Opened while the user's index loads: typing meanwhile waits with it, and only the latest query's results go
    /// out once it is loaded.
    @Test func typingWhileTheIndexLoadsShowsOnlyTheLatestQuery() {
        let bench = Bench()
        bench.storage.answering = .onRelease
        bench.form.opened()
        bench.advance(toMs: 20)
        bench.type("bo")
        bench.advance(toMs: 330)
        #expect(bench.storage.pending == [.loadSearchIndex])
        #expect(bench.history.isEmpty)
        bench.storage.releaseNext()
        while bench.storage.releaseAll() > 0 {}
        bench.advance(toMs: 2_000)
        #expect(bench.history == [Results(atMs: 330, query: "bo", names: ["Bob Brown"], total: 1)])
    }

    @Test(arguments: [false, true])
    func aFormClosedWhileItsIndexLoadsOrItsReadIsOutShowsNothing(readStartedBeforeCancel: Bool) {
        let loading = Bench()
        loading.interposed?.readsStartedBeforeCancel = readStartedBeforeCancel
        loading.storage.answering = .onRelease
        loading.form.opened()
        loading.form.close()
        while loading.storage.releaseAll() > 0 {}
        loading.advance(toMs: 2_000)
        #expect(loading.history.isEmpty)
        #expect(loading.scheduler.pendingCount == 0)

        let reading = Bench()
        reading.interposed?.readsStartedBeforeCancel = readStartedBeforeCancel
        reading.form.opened()
        reading.storage.answering = .onRelease
        reading.advance(toMs: 10)
        reading.type("al")
        reading.advance(toMs: 100)
        reading.type("alb")
        reading.form.close()
        // Changes after the close are not searched either.
        reading.add("Alma")
        while reading.storage.releaseAll() > 0 {}
        reading.advance(toMs: 2_000)
        #expect(reading.history == [Results(atMs: 0, query: "", names: Self.everyone, total: 3)])
        #expect(reading.scheduler.pendingCount == 0)
    }

    @Test func aPeerThatDoesNotReadIsSearchedOnceItHasRead() {
        let bench = Bench(["Ann"])
        bench.form.opened()
        bench.sink.peerIsBehind = true
        bench.advance(toMs: 10)
        bench.add("Ben")
        bench.advance(toMs: 400)
        bench.add("Cy")
        bench.advance(toMs: 900)
        #expect(bench.contacts.calls(.readContacts) == 1, "no search while the peer is behind")
        bench.sink.peerIsBehind = false
        bench.form.outputDrained()
        bench.form.outputDrained()
        bench.advance(toMs: 2_000)
        #expect(bench.history == [
            Results(atMs: 0, query: "", names: ["Ann"], total: 1),
            Results(atMs: 900, query: "", names: ["Ann", "Ben", "Cy"], total: 3),
        ])
    }

    @Test func aSearchRefusedBusyIsTriedAgainAfterTheHint() {
        let bench = Bench()
        bench.storage.failures[.readContacts] = .busy(retryAfterMs: 120)
        bench.form.opened()
        bench.advance(toMs: 119)
        #expect(bench.history.isEmpty)
        bench.storage.failures = [:]
        bench.advance(toMs: 120)
        bench.advance(toMs: 2_000)
        #expect(bench.history == [Results(atMs: 120, query: "", names: Self.everyone, total: 3)])
    }

    @Test func aSearchThatFailsIsLoggedAndTheNextChangeSearchesAgain() {
        let bench = Bench()
        bench.storage.failures[.loadSearchIndex] = .other
        bench.form.opened()
        #expect(bench.history.isEmpty)
        #expect(bench.logged.messages == ["contacts search failed: internal"])
        bench.storage.failures = [:]
        bench.advance(toMs: 500)
        bench.type("bob")
        #expect(bench.history == [Results(atMs: 500, query: "bob", names: ["Bob Brown"], total: 1)])
    }

    /// The throttle in force is read at every input: a `session.hello` override or a reload applies from the next
    /// window on.
    @Test func aNewThrottleAppliesFromTheNextWindow() {
        let bench = Bench()
        bench.form.opened()
        bench.throttle = .milliseconds(1_000)
        bench.advance(toMs: 10)
        bench.type("a")
        bench.advance(toMs: 20)
        bench.type("bo")
        bench.advance(toMs: 1_009)
        #expect(bench.history.count == 2)
        bench.advance(toMs: 1_010)
        #expect(bench.history.last == Results(atMs: 1_010, query: "bo", names: ["Bob Brown"], total: 1))
    }
}
