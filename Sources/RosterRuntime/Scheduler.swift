import RosterCore

/// A timer that can be called off; cancelling twice, or after it fired, does nothing.
public final class Scheduled {
    private var onCancel: (() -> Void)?

    public init(onCancel: @escaping () -> Void) { self.onCancel = onCancel }

    public func cancel() {
        let action = onCancel
        onCancel = nil
        action?()
    }
}

/// The clock and timers that sessions use: the real loop in the daemon, a manual clock in tests.
public protocol Scheduler: AnyObject {
    var now: Instant { get }
    /// Runs `body` on the loop thread once `now` reaches `deadline`.
    @discardableResult
    func schedule(at deadline: Instant, _ body: @escaping () -> Void) -> Scheduled
}

/// Timers ordered by deadline, then by the order they were set, so equal deadlines fire first-set-first.
public struct TimerQueue {
    private struct Entry {
        let deadline: Instant
        let sequence: UInt64
    }

    private var heap: [Entry] = []
    private var bodies: [UInt64: () -> Void] = [:]
    private var nextSequence: UInt64 = 0

    public var earliestDeadline: Instant? {
        mutating get {
            dropCancelledTop()
            return heap.first?.deadline
        }
    }

    public var count: Int { bodies.count }

    public mutating func insert(at deadline: Instant, _ body: @escaping () -> Void) -> UInt64 {
        let sequence = nextSequence
        nextSequence += 1
        bodies[sequence] = body
        heap.append(Entry(deadline: deadline, sequence: sequence))
        siftUp(heap.count - 1)
        return sequence
    }

    public mutating func cancel(_ sequence: UInt64) {
        bodies[sequence] = nil
    }

    /// Removes and returns the next timer due at or before `now`, if any.
    public mutating func popDue(now: Instant) -> (UInt64, () -> Void)? {
        dropCancelledTop()
        guard let top = heap.first, top.deadline <= now else { return nil }
        removeTop()
        guard let body = bodies.removeValue(forKey: top.sequence) else { return nil }
        return (top.sequence, body)
    }

    private mutating func dropCancelledTop() {
        while let top = heap.first, bodies[top.sequence] == nil { removeTop() }
    }

    private func less(_ a: Entry, _ b: Entry) -> Bool {
        a.deadline != b.deadline ? a.deadline < b.deadline : a.sequence < b.sequence
    }

    private mutating func removeTop() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        var index = 0
        while true {
            let left = 2 * index + 1
            let right = left + 1
            var smallest = index
            if left < heap.count && less(heap[left], heap[smallest]) { smallest = left }
            if right < heap.count && less(heap[right], heap[smallest]) { smallest = right }
            if smallest == index { return }
            heap.swapAt(index, smallest)
            index = smallest
        }
    }

    private mutating func siftUp(_ start: Int) {
        var index = start
        while index > 0 {
            let parent = (index - 1) / 2
            guard less(heap[index], heap[parent]) else { return }
            heap.swapAt(index, parent)
            index = parent
        }
    }
}

/// A scheduler whose clock moves only when a test says so; due timers run in deadline order.
public final class ManualScheduler: Scheduler {
    public private(set) var now: Instant
    private var timers = TimerQueue()

    public init(now: Instant = .zero) { self.now = now }

    /// Timers set and not yet fired or cancelled.
    public var pendingCount: Int { timers.count }

    @discardableResult
    public func schedule(at deadline: Instant, _ body: @escaping () -> Void) -> Scheduled {
        let sequence = timers.insert(at: deadline, body)
        return Scheduled { [weak self] in self?.timers.cancel(sequence) }
    }

    /// Moves the clock forward, running every timer that falls due on the way at its own deadline.
    public func advance(by duration: Duration) {
        advance(to: now + duration)
    }

    public func advance(to target: Instant) {
        while let deadline = timers.earliestDeadline, deadline <= target {
            now = max(now, deadline)
            guard let (_, body) = timers.popDue(now: now) else { break }
            body()
        }
        now = max(now, target)
    }
}
