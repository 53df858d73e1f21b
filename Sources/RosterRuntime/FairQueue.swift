import RosterCore

// FairQueue — the worker pool's queue: who runs next, and what is refused.
//
// RULES
//   Every job is charged to a payer (the logged-in user; before a log-in, the remote a trusted gateway speaks for,
//   or else the peer uid) and to the
//   connection that asked, from the moment it is queued until it has finished: waiting and running
//   both count, since a running job still holds its data.
//   Budgets: jobs per connection, jobs per payer, jobs in all; bytes of data per payer and in all.
//   Past one, `enqueue` refuses at once, naming the budget, so the caller answers `busy`. A job whose
//   bytes alone exceed a byte budget is still taken when nothing else is charged there: it waits its
//   turn instead of being refused forever. A forced job (work after the expensive part already ran,
//   the daemon's own chores) is charged but never refused.
//   Service: each payer has its own FIFO, and payers take turns (round-robin), so a payer with a
//   hundred jobs waiting delays another payer's job by at most one of its own per free worker.
//   Order: jobs that name the same `Order` (one user's contacts writes) run one at a time, in the order
//   they were queued; from a payer's FIFO the first job whose order is not running is taken, so a
//   log-in's token never waits for that user's imports to finish.
//
// It is a plain value with no clock and no threads; the pool calls it under its lock.

/// Who a queued job is charged to.
public enum QueuePayer: Hashable, Sendable {
    case account(Int64)
    /// A connection not logged in, by its SO_PEERCRED uid.
    case peer(UInt32)
    /// A connection not logged in that a trusted gateway speaks on for a remote person, by that person's network
    /// (`RemoteAddress.limitNetwork`): one browser's flood waits behind its own jobs, not every web user's.
    case remote(RemoteAddress)
    /// The daemon's own chores (pruning, warming up), which are forced.
    case daemon
}

/// Jobs that must run one at a time, in the order they were queued.
public enum QueueOrder: Hashable, Sendable {
    /// A user's contacts writes, imports and exports: `add` then `remove` pipelined must not swap.
    case contacts(userID: Int64)
}

/// Who a job is charged to, and how many bytes of data it holds.
public struct QueueCharge: Equatable, Sendable {
    public var payer: QueuePayer
    /// The connection that asked; nil for the daemon's own chores.
    public var connection: UInt64?
    public var bytes = 0

    public init(payer: QueuePayer, connection: UInt64?, bytes: Int = 0) {
        self.payer = payer
        self.connection = connection
        self.bytes = bytes
    }

    public static let daemon = QueueCharge(payer: .daemon, connection: nil)
}

/// How much queued work a lane allows; see `FairQueue`'s rules.
public struct QueueBudget: Equatable, Sendable {
    public var jobs: Int
    public var jobsPerPayer: Int
    public var jobsPerConnection: Int
    public var bytes: Int
    public var bytesPerPayer: Int

    public init(jobs: Int, jobsPerPayer: Int, jobsPerConnection: Int, bytes: Int, bytesPerPayer: Int) {
        self.jobs = jobs
        self.jobsPerPayer = jobsPerPayer
        self.jobsPerConnection = jobsPerConnection
        self.bytes = bytes
        self.bytesPerPayer = bytesPerPayer
    }
}

/// Which budget refused a job, and how many jobs it already holds (for `retry_after_ms`).
public struct QueueRefusal: Error, Equatable {
    public enum Scope: String, Equatable, Sendable {
        case connection, payer, total
    }
    public var scope: Scope
    public var charged: Int
}

/// The pool's queue of jobs: per-payer FIFOs served round-robin under budgets; see the rules above.
public struct FairQueue<Job> {
    public typealias Payer = QueuePayer
    public typealias Order = QueueOrder
    public typealias Charge = QueueCharge
    public typealias Refusal = QueueRefusal

    /// A job with what it was charged, as `next` hands it out; give it back to `finished`.
    public struct Entry {
        public let job: Job
        public let charge: Charge
        let order: Order?
    }

    public var budget: QueueBudget
    private var flows: [Payer: [Entry]] = [:]
    /// Payers with jobs waiting, in the order they take turns; `cursor` is the one whose turn is next.
    private var ring: [Payer] = []
    private var cursor = 0
    private var runningOrders = Set<Order>()
    private var jobsByPayer: [Payer: Int] = [:]
    private var bytesByPayer: [Payer: Int] = [:]
    private var jobsByConnection: [UInt64: Int] = [:]
    public private(set) var jobs = 0
    private(set) var bytes = 0
    public private(set) var waiting = 0
    /// How many jobs were refused since the start.
    public private(set) var refused = 0

    public init(budget: QueueBudget) {
        self.budget = budget
    }

    /// Jobs handed out by `next` and not yet finished.
    public var running: Int { jobs - waiting }

    /// Queues `job`, or refuses it (and it will never run); see the rules above.
    public mutating func enqueue(_ job: Job, charge: Charge, order: Order? = nil, force: Bool = false) -> Refusal? {
        if !force, let refusal = refusal(for: charge) {
            refused += 1
            return refusal
        }
        jobs += 1
        bytes += charge.bytes
        waiting += 1
        jobsByPayer[charge.payer, default: 0] += 1
        bytesByPayer[charge.payer, default: 0] += charge.bytes
        if let connection = charge.connection { jobsByConnection[connection, default: 0] += 1 }
        if flows[charge.payer]?.isEmpty ?? true {
            // A payer that had nothing waiting joins just before the one whose turn is next: the last in line.
            ring.insert(charge.payer, at: cursor)
            cursor += 1
        }
        flows[charge.payer, default: []].append(Entry(job: job, charge: charge, order: order))
        return nil
    }

    private func refusal(for charge: Charge) -> Refusal? {
        if let connection = charge.connection {
            let held = jobsByConnection[connection, default: 0]
            if held >= budget.jobsPerConnection { return Refusal(scope: .connection, charged: held) }
        }
        let held = jobsByPayer[charge.payer, default: 0]
        if held >= budget.jobsPerPayer || Self.over(bytesByPayer[charge.payer, default: 0], adding: charge.bytes, budget.bytesPerPayer) {
            return Refusal(scope: .payer, charged: held)
        }
        if jobs >= budget.jobs || Self.over(bytes, adding: charge.bytes, budget.bytes) {
            return Refusal(scope: .total, charged: jobs)
        }
        return nil
    }

    /// Over a byte budget only when something is already charged there (see the rules above).
    private static func over(_ held: Int, adding: Int, _ limit: Int) -> Bool {
        held > 0 && held + adding > limit
    }

    /// The next job to run, now counted as running; nil when nothing waits or every waiting job's order is running.
    public mutating func next() -> Entry? {
        for step in 0..<ring.count {
            let slot = (cursor + step) % ring.count
            let payer = ring[slot]
            guard var flow = flows[payer],
                  let position = flow.firstIndex(where: { $0.order.map { !runningOrders.contains($0) } ?? true }) else {
                continue
            }
            let entry = flow.remove(at: position)
            waiting -= 1
            if let order = entry.order { runningOrders.insert(order) }
            if flow.isEmpty {
                flows[payer] = nil
                ring.remove(at: slot)
                cursor = ring.isEmpty ? 0 : slot % ring.count
            } else {
                flows[payer] = flow
                cursor = (slot + 1) % ring.count
            }
            return entry
        }
        return nil
    }

    /// Releases what a job from `next` was charged, and lets the next job of its order run.
    public mutating func finished(_ entry: Entry) {
        if let order = entry.order { runningOrders.remove(order) }
        jobs -= 1
        bytes -= entry.charge.bytes
        Self.release(&jobsByPayer, entry.charge.payer, 1)
        Self.release(&bytesByPayer, entry.charge.payer, entry.charge.bytes)
        if let connection = entry.charge.connection { Self.release(&jobsByConnection, connection, 1) }
    }

    private static func release<Key>(_ counts: inout [Key: Int], _ key: Key, _ amount: Int) {
        let left = counts[key, default: 0] - amount
        counts[key] = left > 0 ? left : nil
    }
}
