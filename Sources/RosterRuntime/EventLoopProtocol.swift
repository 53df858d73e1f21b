import RosterCore

/// Identifies one descriptor's registration with a loop; events for an id that was deregistered (its fd closed
/// and maybe reused) are dropped.
public struct LoopRegistration: Hashable, Sendable {
    let value: UInt64

    init(value: UInt64) { self.value = value }
}

/// What a socket's code needs of the loop it runs on: interest in a descriptor's readiness, and timers on the
/// loop's clock. The epoll `EventLoop` in the daemon; `EmbeddedEventLoop` (no epoll, a manual clock) in tests,
/// after SwiftNIO's `EventLoop` and `EmbeddedEventLoop`. Everything is called on the loop's own thread.
public protocol EventLoopProtocol: Scheduler {
    /// Watches `fd` for `events` (epoll bits); `handler` gets the events that occurred, on the loop thread.
    func register(fd: Int32, events: UInt32, handler: @escaping (UInt32) -> Void) throws(SystemError) -> LoopRegistration
    /// Changes the events watched; a registration already gone is left alone.
    func modify(_ registration: LoopRegistration, events: UInt32) throws(SystemError)
    /// Stops watching; call before closing the fd.
    func deregister(_ registration: LoopRegistration)
}
