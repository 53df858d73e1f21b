import CLinux
import Glibc
import RosterCore

/// One thread's epoll loop: sockets, a timerfd behind a timer heap, an eventfd for work handed in by
/// other threads, and a signalfd for SIGTERM, SIGINT and SIGHUP. Everything but `execute` and `stop`
/// must be called on the loop's own thread.
public final class EventLoop: Scheduler, @unchecked Sendable {
    /// Identifies a registration; events for an id that was deregistered (its fd closed and maybe reused) are dropped.
    public struct RegistrationID: Hashable, Sendable {
        fileprivate let value: UInt64
    }

    private struct Registration {
        let fd: Int32
        let handler: (UInt32) -> Void
    }

    private static let timerID: UInt64 = 1
    private static let wakeID: UInt64 = 2
    private static let signalID: UInt64 = 3

    private let epollFD: Int32
    private let timerFD: Int32
    private let wakeFD: Int32
    private let signalFD: Int32
    private var registrations: [UInt64: Registration] = [:]
    private var nextID: UInt64 = 16
    private var timers = TimerQueue()
    private var armedDeadline: Instant?
    private let inbox = Locked<[@Sendable () -> Void]>([])
    private let stopRequested = Locked(false)
    private var events = [epoll_event](repeating: epoll_event(), count: 256)

    /// Called on the loop thread for each signal caught.
    public var onSignal: ((Int32) -> Void)?

    /// Blocks `signals` in the calling thread (so create the loop before any other thread) and reads them here instead.
    public init(signals: [Int32] = [SIGTERM, SIGINT, SIGHUP]) throws(SystemError) {
        epollFD = try Syscall.blocking("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
        timerFD = try Syscall.blocking("timerfd_create") {
            timerfd_create(CLOCK_MONOTONIC, Int32(TFD_NONBLOCK | TFD_CLOEXEC))
        }
        wakeFD = try Syscall.blocking("eventfd") { eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC)) }
        var mask = sigset_t()
        sigemptyset(&mask)
        for signal in signals { sigaddset(&mask, signal) }
        pthread_sigmask(SIG_BLOCK, &mask, nil)
        signalFD = try Syscall.blocking("signalfd") { signalfd(-1, &mask, Int32(SFD_NONBLOCK | SFD_CLOEXEC)) }
        for (fd, id) in [(timerFD, Self.timerID), (wakeFD, Self.wakeID), (signalFD, Self.signalID)] {
            try add(fd: fd, id: id, events: EPOLLIN.rawValue)
        }
    }

    deinit {
        for fd in [signalFD, wakeFD, timerFD, epollFD] { close(fd) }
    }

    // MARK: Clock and timers

    public var now: Instant {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Instant(nanoseconds: Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec))
    }

    @discardableResult
    public func schedule(at deadline: Instant, _ body: @escaping () -> Void) -> Scheduled {
        let sequence = timers.insert(at: deadline, body)
        rearmTimer()
        return Scheduled { [weak self] in self?.timers.cancel(sequence) }
    }

    /// Timers set and not yet fired or cancelled.
    public var pendingTimerCount: Int { timers.count }

    private func rearmTimer() {
        let earliest = timers.earliestDeadline
        guard earliest != armedDeadline else { return }
        armedDeadline = earliest
        var spec = itimerspec()
        if let earliest {
            // Zero disarms a timerfd, so a deadline at the clock's origin is nudged by a nanosecond.
            let nanoseconds = max(earliest.nanoseconds, 1)
            spec.it_value.tv_sec = Int(nanoseconds / 1_000_000_000)
            spec.it_value.tv_nsec = Int(nanoseconds % 1_000_000_000)
        }
        _ = try? Syscall.blocking("timerfd_settime") { timerfd_settime(timerFD, Int32(TFD_TIMER_ABSTIME), &spec, nil) }
    }

    private func runDueTimers() {
        var expirations: UInt64 = 0
        _ = try? Syscall.nonBlocking("read(timerfd)") { read(timerFD, &expirations, 8) }
        armedDeadline = nil
        let current = now
        while let (_, body) = timers.popDue(now: current) { body() }
        rearmTimer()
    }

    // MARK: Cross-thread work

    /// Runs `body` on the loop thread soon; safe to call from any thread (worker results come back this way).
    public func execute(_ body: @escaping @Sendable () -> Void) {
        inbox.withLock { $0.append(body) }
        wake()
    }

    /// Makes `run` return after the current iteration; safe from any thread.
    public func stop() {
        stopRequested.withLock { $0 = true }
        wake()
    }

    private func wake() {
        var one: UInt64 = 1
        _ = try? Syscall.nonBlocking("write(eventfd)") { write(wakeFD, &one, 8) }
    }

    private func drainInbox() {
        var counter: UInt64 = 0
        _ = try? Syscall.nonBlocking("read(eventfd)") { read(wakeFD, &counter, 8) }
        let work = inbox.withLock { queue -> [@Sendable () -> Void] in
            defer { queue.removeAll(keepingCapacity: true) }
            return queue
        }
        for body in work { body() }
    }

    private func drainSignals() {
        var info = signalfd_siginfo()
        while true {
            let outcome = try? Syscall.nonBlocking("read(signalfd)") {
                read(signalFD, &info, MemoryLayout<signalfd_siginfo>.size)
            }
            guard case .done(let count)? = outcome, count == MemoryLayout<signalfd_siginfo>.size else { return }
            onSignal?(Int32(info.ssi_signo))
        }
    }

    // MARK: File descriptors

    public func register(fd: Int32, events: UInt32, handler: @escaping (UInt32) -> Void) throws(SystemError) -> RegistrationID {
        let id = nextID
        nextID += 1
        try add(fd: fd, id: id, events: events)
        registrations[id] = Registration(fd: fd, handler: handler)
        return RegistrationID(value: id)
    }

    public func modify(_ id: RegistrationID, events: UInt32) throws(SystemError) {
        guard let registration = registrations[id.value] else { return }
        var event = epoll_event()
        event.events = events
        event.data.u64 = id.value
        try Syscall.blocking("epoll_ctl(MOD)") { epoll_ctl(epollFD, EPOLL_CTL_MOD, registration.fd, &event) }
    }

    /// Stops watching; call before closing the fd.
    public func deregister(_ id: RegistrationID) {
        guard let registration = registrations.removeValue(forKey: id.value) else { return }
        _ = try? Syscall.blocking("epoll_ctl(DEL)") { epoll_ctl(epollFD, EPOLL_CTL_DEL, registration.fd, nil) }
    }

    private func add(fd: Int32, id: UInt64, events: UInt32) throws(SystemError) {
        var event = epoll_event()
        event.events = events
        event.data.u64 = id
        try Syscall.blocking("epoll_ctl(ADD)") { epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) }
    }

    // MARK: Running

    /// Serves events until `stop()`; returns on the loop thread.
    public func run() throws(SystemError) {
        stopRequested.withLock { $0 = false }
        while !stopRequested.withLock({ $0 }) {
            try runOnce(timeoutMs: -1)
        }
    }

    /// Waits up to `timeoutMs` (-1: forever) for events and handles those that arrived: one turn of the loop,
    /// for harnesses (the fuzzer, tests) that interleave their own work with the loop's.
    public func runOnce(timeoutMs: Int32) throws(SystemError) {
        let count = try events.withUnsafeMutableBufferPointer { buffer throws(SystemError) -> Int32 in
            switch try Syscall.nonBlocking("epoll_wait", { epoll_wait(epollFD, buffer.baseAddress, Int32(buffer.count), timeoutMs) }) {
            case .done(let count): return count
            case .wouldBlock: return 0
            }
        }
        for index in 0..<Int(count) {
            let event = events[index]
            switch event.data.u64 {
            case Self.timerID: runDueTimers()
            case Self.wakeID: drainInbox()
            case Self.signalID: drainSignals()
            case let id: registrations[id]?.handler(event.events)
            }
        }
    }
}
