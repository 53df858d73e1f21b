import RosterRuntime

/// The storage workers' turns at SQLite's one write lock, in the order they asked for it.
///
/// Why: SQLite lets one connection write at a time, and one waiting for the lock polls it with growing sleeps
/// (the busy handler). Two workers on separate connections therefore do not take turns: a flood of
/// imports kept the lock busy between the sleeps of another user's `session.resume`, which answered only after
/// hundreds of imports, however fairly the queue had handed the jobs out. Every write transaction of the daemon
/// runs inside `take`, so the lock is free whenever a turn begins, and turns go first come, first served.
final class WriteTurn: Sendable {
    private struct Tickets {
        var next: UInt64 = 0
        var serving: UInt64 = 0
    }

    private let tickets = Locked(Tickets())

    /// Runs `body` once every writer that asked before has finished.
    func take<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        let ticket = tickets.withLock { tickets -> UInt64 in
            defer { tickets.next += 1 }
            return tickets.next
        }
        tickets.wait { $0.serving == ticket ? () : nil }
        defer {
            tickets.withLock { $0.serving += 1 }
            tickets.broadcast()
        }
        return try body()
    }
}
