import CLinux
import Glibc
import RosterCore

/// One thread's epoll loop: sockets, a timerfd behind a timer heap, an eventfd for work handed in by
/// other threads, and a signalfd for SIGTERM, SIGINT and SIGHUP. Everything but `execute` and `stop`
/// must be called on the loop's own thread.
public final class EventLoop: EventLoopProtocol, @unchecked Sendable {
    /// Identifies a registration (see `LoopRegistration`).
    public typealias RegistrationID = LoopRegistration

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
    /// Set while the timerfd refuses to be armed: the timers are then run by `runOnce`, whose wait their
    /// earliest deadline bounds, so that they still fire (late by at most a millisecond).
    private var timerFDFailing = false
    private var events = [epoll_event](repeating: epoll_event(), count: 256)
    /// Where the loop reports a system call of its own that failed (it then carries on as best it can).
    public let logger: Logger

    /// Called on the loop thread for each signal caught.
    public var onSignal: ((Int32) -> Void)?

    /// Blocks `signals` in the calling thread (so create the loop before any other thread) and reads them here instead.
    public init(signals: [Int32] = [SIGTERM, SIGINT, SIGHUP], logger: Logger = Logger()) throws(SystemError) {
        self.logger = logger
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
        var spec = itimerspec()
        if let earliest {
            // Zero disarms a timerfd, so a deadline at the clock's origin is nudged by a nanosecond.
            let nanoseconds = max(earliest.nanoseconds, 1)
            spec.it_value.tv_sec = Int(nanoseconds / 1_000_000_000)
            spec.it_value.tv_nsec = Int(nanoseconds % 1_000_000_000)
        }
        do {
            try Syscall.blocking("timerfd_settime") { timerfd_settime(timerFD, Int32(TFD_TIMER_ABSTIME), &spec, nil) }
            armedDeadline = earliest
            timerFDFailing = false
        } catch {
            // A timer that never fires would stall every deadline in the daemon without a word: say so once, and
            // let `runOnce` run the timers until the timerfd can be armed again (tried at each change).
            if !timerFDFailing { logger.error("cannot arm the event loop's timer (\(error)); timers now bound its wait") }
            timerFDFailing = true
            armedDeadline = nil
        }
    }

    private func timerFDFired() {
        var expirations: UInt64 = 0
        do {
            _ = try Syscall.nonBlocking("read(timerfd)") { read(timerFD, &expirations, 8) }
        } catch {
            logger.warning("cannot read the event loop's timer: \(error)")
        }
        armedDeadline = nil
        runDueTimers()
    }

    private func runDueTimers() {
        let current = now
        while let (_, body) = timers.popDue(now: current) { body() }
        rearmTimer()
    }

    /// How long `runOnce` may wait: as asked, or less while the timers are not on the timerfd.
    private func wait(upTo timeoutMs: Int32) -> Int32 {
        guard timerFDFailing, let earliest = timers.earliestDeadline else { return timeoutMs }
        let due = Int32(clamping: (earliest - now).millisecondsRoundedUp)
        return timeoutMs < 0 ? due : min(timeoutMs, due)
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
        // EAGAIN means the counter is already far from zero: the loop is woken anyway.
        do {
            _ = try Syscall.nonBlocking("write(eventfd)") { write(wakeFD, &one, 8) }
        } catch {
            logger.error("cannot wake the event loop: \(error)")
        }
    }

    private func drainInbox() {
        var counter: UInt64 = 0
        do {
            _ = try Syscall.nonBlocking("read(eventfd)") { read(wakeFD, &counter, 8) }
        } catch {
            logger.warning("cannot read the event loop's wake-ups: \(error)")
        }
        let work = inbox.withLock { queue -> [@Sendable () -> Void] in
            defer { queue.removeAll(keepingCapacity: true) }
            return queue
        }
        for body in work { body() }
    }

    private func drainSignals() {
        var info = signalfd_siginfo()
        while true {
            let outcome: IOResult<Int>
            do {
                outcome = try Syscall.nonBlocking("read(signalfd)") {
                    read(signalFD, &info, MemoryLayout<signalfd_siginfo>.size)
                }
            } catch {
                logger.warning("cannot read the signals caught: \(error)")
                return
            }
            guard case .done(let count) = outcome, count == MemoryLayout<signalfd_siginfo>.size else { return }
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
        do {
            try Syscall.blocking("epoll_ctl(DEL)") { epoll_ctl(epollFD, EPOLL_CTL_DEL, registration.fd, nil) }
        } catch {
            // Its events are dropped from now on (the id is gone), and closing the fd takes it out of epoll.
            logger.warning("cannot stop watching descriptor \(registration.fd): \(error)")
        }
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
        let timeoutMs = wait(upTo: timeoutMs)
        let count = try events.withUnsafeMutableBufferPointer { buffer throws(SystemError) -> Int32 in
            switch try Syscall.nonBlocking("epoll_wait", { epoll_wait(epollFD, buffer.baseAddress, Int32(buffer.count), timeoutMs) }) {
            case .done(let count): return count
            case .wouldBlock: return 0
            }
        }
        for index in 0..<Int(count) {
            let event = events[index]
            switch event.data.u64 {
            case Self.timerID: timerFDFired()
            case Self.wakeID: drainInbox()
            case Self.signalID: drainSignals()
            case let id: registrations[id]?.handler(event.events)
            }
        }
        if timerFDFailing { runDueTimers() }
    }
}
