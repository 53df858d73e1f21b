import RosterCore
import RosterRuntime

/// The unsent output of every connection together: the daemon's output budget (in total and per peer uid, see
/// `OutputBudget`) and, once a flood of it has drained, handing the freed memory back (see `MemoryTrimPolicy`).
final class ServerOutput {
    private(set) var budget = OutputBudget()
    private var memoryTrim = MemoryTrimPolicy()
    private let scheduler: any Scheduler
    /// What a due trim does: `MemoryTrim.returnFreedMemory` in the daemon, a recorder in a test.
    private let trim: () -> Void
    /// `[Server] OutputBudgetBytes=` and `OutputBudgetPerUIDBytes=`; a reload replaces them.
    var totalLimit: Int
    var perUIDLimit: Int

    init(scheduler: any Scheduler, settings: ServerSettings, trim: @escaping () -> Void = MemoryTrim.returnFreedMemory) {
        self.scheduler = scheduler
        self.trim = trim
        totalLimit = settings.outputBudgetBytes
        perUIDLimit = settings.outputBudgetPerUIDBytes
    }

    func apply(_ settings: ServerSettings) {
        totalLimit = settings.outputBudgetBytes
        perUIDLimit = settings.outputBudgetPerUIDBytes
    }

    /// A connection of `uid` now holds `delta` bytes more (or fewer) unsent.
    func queuedChanged(uid: UInt32, by delta: Int) {
        budget.adjust(uid: uid, by: delta)
        let scheduler = self.scheduler
        if let due = memoryTrim.outputChanged(total: budget.total, now: scheduler.now) {
            scheduler.schedule(at: due, trim)
        }
    }

    /// Whether all connections together, or those of `uid`, hold as much unsent output as they may.
    func isSpent(uid: UInt32) -> Bool {
        budget.isSpent(uid: uid, totalLimit: totalLimit, perUIDLimit: perUIDLimit)
    }
}
