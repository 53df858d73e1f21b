import RosterCore

/// Timers kept by what they are for, on one scheduler: setting a key replaces that key's armed timer, and a
/// timer is forgotten once it fires or is cancelled. What a form's debounces and a daemon's repeating chores
/// each need, so that a stale timer can never fire beside its replacement.
public final class KeyedTimers<Key: Hashable> {
    private let scheduler: any Scheduler
    private var armed: [Key: Scheduled] = [:]

    public init(on scheduler: any Scheduler) {
        self.scheduler = scheduler
    }

    /// Arms `key` for `deadline`, cancelling the timer it had; `body` runs once it fires, after `key` is forgotten.
    public func set(_ key: Key, at deadline: Instant, _ body: @escaping () -> Void) {
        armed[key]?.cancel()
        armed[key] = scheduler.schedule(at: deadline) { [weak self] in
            self?.armed[key] = nil
            body()
        }
    }

    public func cancel(_ key: Key) {
        armed.removeValue(forKey: key)?.cancel()
    }

    public func cancelAll() {
        let all = armed.values
        armed = [:]
        for timer in all { timer.cancel() }
    }

    /// How many keys are armed.
    public var count: Int { armed.count }
}
