/// One user's contact operations, one at a time in the order they were asked, on the loop thread: the next
/// starts when the previous has answered. The pool would otherwise run two of them on two connections at once,
/// and a pipelined `add` then `remove` could swap. A budget bounds how many one user may have waiting.
final class ContactTurns {
    /// An operation: it calls `done` once, right after it has answered.
    typealias Operation = (_ done: @escaping () -> Void) -> Void

    private var waiting: [Int64: [Operation]] = [:]
    /// Operations one user may have waiting behind the running one; past it, `enqueue` refuses.
    var limitPerUser: Int

    init(limitPerUser: Int) {
        self.limitPerUser = max(1, limitPerUser)
    }

    /// How many users have an operation running.
    var activeUsers: Int { waiting.count }

    /// Runs `operation` now if `user` has none running, else after the ones asked before; false when the
    /// user's budget is spent (nothing will run).
    func enqueue(_ user: Int64, _ operation: @escaping Operation) -> Bool {
        if var queue = waiting[user] {
            guard queue.count < limitPerUser else { return false }
            queue.append(operation)
            waiting[user] = queue
            return true
        }
        waiting[user] = []
        start(user, operation)
        return true
    }

    private func start(_ user: Int64, _ operation: Operation) {
        var finished = false
        operation { [weak self] in
            guard !finished else { return }
            finished = true
            self?.next(user)
        }
    }

    private func next(_ user: Int64) {
        guard var queue = waiting[user] else { return }
        guard !queue.isEmpty else {
            waiting[user] = nil
            return
        }
        let operation = queue.removeFirst()
        waiting[user] = queue
        start(user, operation)
    }
}
