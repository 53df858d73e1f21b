import CLinux
import RosterCore
import RosterRuntime

/// When to hand freed memory back to the system. glibc keeps freed heap pages for reuse, so after 150 peers that
/// did not read had closed, the daemon still held the gigabytes their output had taken.
///
/// Rule: once the output queued for all connections has climbed above `highWater`, the next time it falls to
/// `lowWater` or less a trim is due, at most one per `interval` (a trim walks the heap; a peer hovering around the
/// mark must not make the daemon do that on every write).
struct MemoryTrimPolicy {
    static let highWater = 8 << 20
    static let lowWater = 1 << 20
    static let interval = Duration.seconds(1)

    private var armed = false
    private var lastTrim: Instant?

    /// When to trim, if the output's new total makes one due.
    mutating func outputChanged(total: Int, now: @autoclosure () -> Instant) -> Instant? {
        if total > Self.highWater {
            armed = true
            return nil
        }
        guard armed, total <= Self.lowWater else { return nil }
        armed = false
        let now = now()
        let due = max(now, lastTrim.map { $0 + Self.interval } ?? now)
        lastTrim = due
        return due
    }
}

enum MemoryTrim {
    /// `malloc_trim(0)` on a thread of its own: it walks every arena, and the loop has better things to do.
    static func returnFreedMemory() {
        startDetachedThread { _ = malloc_trim(0) }
    }
}
