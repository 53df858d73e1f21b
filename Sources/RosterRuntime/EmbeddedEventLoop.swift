import CLinux
import Glibc
import RosterCore

/// A loop for tests, after SwiftNIO's `EmbeddedEventLoop`: no epoll and no thread of its own. Its clock moves
/// only when the test says so (`advance`), and a registered descriptor hears of events only when the test hands
/// them over (`deliver`) or asks which are ready now (`runOnce`, with a `poll(2)` that never waits). So a test
/// can stop between any two events and look at what a socket's code asked for (`interest(of:)`).
public final class EmbeddedEventLoop: EventLoopProtocol {
    private struct Registration {
        let fd: Int32
        var events: UInt32
        let handler: (UInt32) -> Void
    }

    private let clock: ManualScheduler
    private var registrations: [UInt64: Registration] = [:]
    private var nextID: UInt64 = 1
    /// The next `modify` throws this, as a failing `epoll_ctl` would, then the loop behaves again.
    public var failNextModify: SystemError?

    public init(now: Instant = .zero) {
        clock = ManualScheduler(now: now)
    }

    // MARK: Clock and timers

    public var now: Instant { clock.now }

    @discardableResult
    public func schedule(at deadline: Instant, _ body: @escaping () -> Void) -> Scheduled {
        clock.schedule(at: deadline, body)
    }

    /// Timers set and not yet fired or cancelled.
    public var pendingTimerCount: Int { clock.pendingCount }

    /// Moves the clock forward, running every timer that falls due on the way at its own deadline.
    public func advance(by duration: Duration) {
        clock.advance(by: duration)
    }

    // MARK: File descriptors

    public func register(fd: Int32, events: UInt32, handler: @escaping (UInt32) -> Void) throws(SystemError) -> LoopRegistration {
        let id = nextID
        nextID += 1
        registrations[id] = Registration(fd: fd, events: events, handler: handler)
        return LoopRegistration(value: id)
    }

    public func modify(_ registration: LoopRegistration, events: UInt32) throws(SystemError) {
        if let failure = failNextModify {
            failNextModify = nil
            throw failure
        }
        registrations[registration.value]?.events = events
    }

    public func deregister(_ registration: LoopRegistration) {
        registrations[registration.value] = nil
    }

    /// The events asked for `fd` now; nil when nothing watches it.
    public func interest(of fd: Int32) -> UInt32? {
        registrations.values.first { $0.fd == fd }?.events
    }

    /// Hands `events` to whatever watches `fd` (nothing happens if nothing does), whether they are asked or not,
    /// as epoll reports a hang-up or an error to everyone.
    public func deliver(_ events: UInt32, to fd: Int32) {
        registrations.values.first { $0.fd == fd }?.handler(events)
    }

    /// One turn: the events that `poll(2)` finds ready now on every watched descriptor (those asked, plus
    /// hang-ups and errors, which epoll reports unasked), each handed over in registration order, then the
    /// timers due now. Returns how many descriptors had events.
    @discardableResult
    public func runOnce() -> Int {
        let watched = registrations.sorted { $0.key < $1.key }
        var polled = watched.map { pollfd(fd: $0.value.fd, events: Self.pollEvents($0.value.events), revents: 0) }
        let ready = poll(&polled, nfds_t(polled.count), 0)
        var delivered = 0
        if ready > 0 {
            for (index, entry) in watched.enumerated() where polled[index].revents != 0 {
                // A handler may have deregistered a later descriptor: only those still watched hear.
                guard let registration = registrations[entry.key] else { continue }
                delivered += 1
                registration.handler(Self.epollEvents(polled[index].revents))
            }
        }
        clock.advance(by: .zero)
        return delivered
    }

    // epoll's bits for in, out, error, hang-up and peer shut-down equal poll's on Linux, by design of the ABI.
    private static let sharedBits = EPOLLIN.rawValue | EPOLLOUT.rawValue | EPOLLERR.rawValue | EPOLLHUP.rawValue
        | EPOLLRDHUP.rawValue

    private static func pollEvents(_ events: UInt32) -> Int16 {
        Int16(truncatingIfNeeded: events & sharedBits)
    }

    private static func epollEvents(_ revents: Int16) -> UInt32 {
        UInt32(UInt16(bitPattern: revents)) & sharedBits
    }
}
