import Glibc
import RosterCore
import Testing
@testable import RosterRuntime


@Suite("Timers on the manual clock")
struct ManualSchedulerTests {
    @Test func nothingFiresBeforeItsDeadlineAndEverythingAtIt() {
        let clock = ManualScheduler()
        var fired: [String] = []
        clock.schedule(at: .milliseconds(500)) { fired.append("a") }
        clock.advance(by: .milliseconds(499))
        #expect(fired == [])
        clock.advance(by: .milliseconds(1))
        #expect(fired == ["a"])
        #expect(clock.now == .milliseconds(500))
    }

    @Test func timersFireInDeadlineOrderThenSetOrder() {
        let clock = ManualScheduler()
        var fired: [String] = []
        clock.schedule(at: .milliseconds(30)) { fired.append("c") }
        clock.schedule(at: .milliseconds(10)) { fired.append("a1") }
        clock.schedule(at: .milliseconds(10)) { fired.append("a2") }
        clock.schedule(at: .milliseconds(20)) { fired.append("b") }
        clock.advance(by: .seconds(1))
        #expect(fired == ["a1", "a2", "b", "c"])
    }

    @Test func cancelledTimersNeverFireAndCancelTwiceIsHarmless() {
        let clock = ManualScheduler()
        var fired: [String] = []
        let first = clock.schedule(at: .milliseconds(10)) { fired.append("cancelled") }
        clock.schedule(at: .milliseconds(20)) { fired.append("kept") }
        first.cancel()
        first.cancel()
        clock.advance(by: .milliseconds(100))
        #expect(fired == ["kept"])
        #expect(clock.pendingCount == 0)
    }

    @Test func aTimerSetByATimerRunsInTheSameAdvanceAtItsOwnTime() {
        let clock = ManualScheduler()
        var seen: [Instant] = []
        clock.schedule(at: .milliseconds(10)) {
            seen.append(clock.now)
            clock.schedule(at: clock.now + .milliseconds(5)) { seen.append(clock.now) }
        }
        clock.advance(by: .milliseconds(100))
        #expect(seen == [.milliseconds(10), .milliseconds(15)])
    }
}

@Suite("The epoll loop")
struct EventLoopTests {
    @Test func realTimersFireInDeadlineOrderAndCancelledOnesDoNot() throws {
        let loop = try EventLoop(signals: [])
        var fired: [Int] = []
        let start = loop.now
        for (order, offset) in [(3, 3), (1, 1), (2, 2), (4, 4)] {
            loop.schedule(at: start + .milliseconds(offset)) { fired.append(order) }
        }
        let cancelled = loop.schedule(at: start + .milliseconds(2)) { fired.append(99) }
        cancelled.cancel()
        loop.schedule(at: start + .milliseconds(6)) { loop.stop() }
        try loop.run()
        #expect(fired == [1, 2, 3, 4])
        #expect(loop.now >= start + .milliseconds(6))
    }

    @Test func executeFromAnotherThreadRunsOnTheLoop() throws {
        let loop = try EventLoop(signals: [])
        let box = Box()
        let thread = Thread2 {
            loop.execute { box.value = 42; loop.stop() }
        }
        thread.start()
        try loop.run()
        #expect(box.value == 42)
    }

    @Test func readinessOfARegisteredDescriptorIsDelivered() throws {
        let loop = try EventLoop(signals: [])
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        var got: UInt8 = 0
        _ = try loop.register(fd: fds[0], events: UInt32(1)) { _ in
            _ = read(fds[0], &got, 1)
            loop.stop()
        }
        var byte: UInt8 = 7
        _ = write(fds[1], &byte, 1)
        try loop.run()
        #expect(got == 7)
    }

    @Test func signalsArriveThroughTheSignalfd() throws {
        let loop = try EventLoop(signals: [SIGUSR1])
        var caught: [Int32] = []
        loop.onSignal = { signal in
            caught.append(signal)
            loop.stop()
        }
        // Aimed at this thread, which blocked it: a process-wide signal could land on a test thread and kill the run.
        loop.execute { _ = pthread_kill(pthread_self(), SIGUSR1) }
        try loop.run()
        #expect(caught == [SIGUSR1])
    }
}

private final class Box: @unchecked Sendable {
    var value = 0
}

/// A plain pthread, so the test does not depend on Foundation's Thread.
private final class Thread2: @unchecked Sendable {
    private let body: @Sendable () -> Void

    init(_ body: @escaping @Sendable () -> Void) { self.body = body }

    func start() {
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        pthread_create(&thread, nil, { raw in
            guard let raw else { return nil }
            let me = Unmanaged<Thread2>.fromOpaque(raw).takeRetainedValue()
            me.body()
            return nil
        }, context)
        pthread_detach(thread)
    }
}
