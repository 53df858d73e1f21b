import Testing
@testable import RosterRuntime


/// The queue alone, without threads: which job runs next, and which is refused (issue 12's rules in `FairQueue`).
@Suite("Fair queue")
struct FairQueueTests {
    private typealias Queue = FairQueue<String>

    private static let roomy = QueueBudget(jobs: 100, jobsPerPayer: 100, jobsPerConnection: 100, bytes: 1_000, bytesPerPayer: 1_000)

    private static func charge(_ payer: QueuePayer, connection: UInt64 = 1, bytes: Int = 0) -> QueueCharge {
        QueueCharge(payer: payer, connection: connection, bytes: bytes)
    }

    /// Takes every job it can, finishing each before the next, and names them in the order they ran.
    private static func drain(_ queue: inout Queue) -> [String] {
        var ran: [String] = []
        while let entry = queue.next() {
            ran.append(entry.job)
            queue.finished(entry)
        }
        return ran
    }

    @Test func payersTakeTurnsAndEachKeepsItsOwnOrder() {
        var queue = Queue(budget: Self.roomy)
        for job in ["a1", "a2", "a3"] { #expect(queue.enqueue(job, charge: Self.charge(.account(1))) == nil) }
        #expect(queue.enqueue("b1", charge: Self.charge(.account(2), connection: 2)) == nil)
        #expect(queue.enqueue("c1", charge: Self.charge(.peer(1000), connection: 3)) == nil)
        #expect(Self.drain(&queue) == ["a1", "b1", "c1", "a2", "a3"])
        #expect(queue.jobs == 0 && queue.waiting == 0)
    }

    /// The flood of issue 12: a payer with a long queue delays a newcomer by one of its own jobs, not by all.
    @Test func aNewcomerWaitsForOneJobOfABusyPayerAtMost() {
        var queue = Queue(budget: Self.roomy)
        for number in 1...50 { _ = queue.enqueue("import\(number)", charge: Self.charge(.account(1))) }
        let first = queue.next()
        #expect(first?.job == "import1")
        #expect(queue.enqueue("login", charge: Self.charge(.peer(1000), connection: 2)) == nil)
        #expect(queue.next()?.job == "import2")
        #expect(queue.next()?.job == "login")
        #expect(queue.next()?.job == "import3")
    }

    @Test func jobsOfOneOrderRunOneAtATimeAndOthersPassThem() {
        var queue = Queue(budget: Self.roomy)
        let user = QueuePayer.account(1)
        _ = queue.enqueue("add", charge: Self.charge(user), order: .contacts(userID: 1))
        _ = queue.enqueue("remove", charge: Self.charge(user), order: .contacts(userID: 1))
        _ = queue.enqueue("token", charge: Self.charge(user))
        _ = queue.enqueue("other user's add", charge: Self.charge(.account(2), connection: 2), order: .contacts(userID: 2))
        let add = queue.next()
        #expect(add?.job == "add")
        #expect(queue.next()?.job == "other user's add")
        #expect(queue.next()?.job == "token")
        // "remove" must wait for "add" to finish, however many workers are free.
        #expect(queue.next() == nil)
        #expect(queue.waiting == 1 && queue.running == 3)
        if let add { queue.finished(add) }
        #expect(queue.next()?.job == "remove")
    }

    @Test func eachJobBudgetRefusesAtOnceAndNamesItself() {
        var queue = Queue(budget: QueueBudget(jobs: 5, jobsPerPayer: 3, jobsPerConnection: 2, bytes: 1_000, bytesPerPayer: 1_000))
        let alice = QueuePayer.account(1)
        #expect(queue.enqueue("1", charge: Self.charge(alice, connection: 1)) == nil)
        #expect(queue.enqueue("2", charge: Self.charge(alice, connection: 1)) == nil)
        #expect(queue.enqueue("3", charge: Self.charge(alice, connection: 1)) == QueueRefusal(scope: .connection, charged: 2))
        #expect(queue.enqueue("4", charge: Self.charge(alice, connection: 2)) == nil)
        #expect(queue.enqueue("5", charge: Self.charge(alice, connection: 3)) == QueueRefusal(scope: .payer, charged: 3))
        #expect(queue.enqueue("6", charge: Self.charge(.account(2), connection: 4)) == nil)
        #expect(queue.enqueue("7", charge: Self.charge(.account(3), connection: 5)) == nil)
        #expect(queue.enqueue("8", charge: Self.charge(.account(4), connection: 6)) == QueueRefusal(scope: .total, charged: 5))
        #expect(queue.refused == 3)
        // A forced job is charged but never refused.
        #expect(queue.enqueue("token", charge: Self.charge(alice, connection: 1), force: true) == nil)
        #expect(queue.jobs == 6)
        // Running still counts; only a finished job gives its place back.
        guard let first = queue.next(), let second = queue.next() else {
            Issue.record("nothing to run")
            return
        }
        #expect(queue.enqueue("9", charge: Self.charge(.account(4), connection: 6)) != nil)
        queue.finished(first)
        #expect(queue.enqueue("9", charge: Self.charge(.account(4), connection: 6)) != nil)
        queue.finished(second)
        #expect(queue.enqueue("9", charge: Self.charge(.account(4), connection: 6)) == nil)
    }

    @Test func importBytesAreBudgetedButAnOversizedOneAloneStillGetsItsTurn() {
        var queue = Queue(budget: QueueBudget(jobs: 100, jobsPerPayer: 100, jobsPerConnection: 100, bytes: 250, bytesPerPayer: 100))
        let alice = QueuePayer.account(1)
        #expect(queue.enqueue("60", charge: Self.charge(alice, bytes: 60)) == nil)
        #expect(queue.enqueue("40", charge: Self.charge(alice, bytes: 40)) == nil)
        #expect(queue.enqueue("1", charge: Self.charge(alice, bytes: 1)) == QueueRefusal(scope: .payer, charged: 2))
        #expect(queue.enqueue("plain", charge: Self.charge(alice)) == nil)
        #expect(queue.enqueue("bob 100", charge: Self.charge(.account(2), connection: 2, bytes: 100)) == nil)
        #expect(queue.enqueue("carol 100", charge: Self.charge(.account(3), connection: 3, bytes: 100)) == QueueRefusal(scope: .total, charged: 4))
        #expect(Self.drain(&queue) == ["60", "bob 100", "40", "plain"])
        #expect(queue.bytes == 0)
        #expect(queue.enqueue("carol 500", charge: Self.charge(.account(3), connection: 3, bytes: 500)) == nil)
        #expect(queue.enqueue("dave 1", charge: Self.charge(.account(4), connection: 4, bytes: 1)) == QueueRefusal(scope: .total, charged: 1))
    }
}
