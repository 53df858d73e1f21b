import CLinux
import Glibc
import RosterCore
import Testing
@testable import RosterRuntime

/// A pipe whose ends close with it.
private final class Pipe {
    let reader: Int32
    let writer: Int32

    init() throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw SystemError(errno: errno, call: "pipe") }
        reader = fds[0]
        writer = fds[1]
        for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
    }

    deinit {
        close(reader)
        close(writer)
    }

    func send(_ text: String = "x") {
        _ = text.withCString { write(writer, $0, strlen($0)) }
    }

    func drain() {
        var chunk = [UInt8](repeating: 0, count: 256)
        while chunk.withUnsafeMutableBytes({ read(reader, $0.baseAddress, $0.count) }) > 0 {}
    }
}

/// The epoll loop on real descriptors: readiness reaches the handler of the registration that asked for it, and
/// a changed or dropped interest is honoured (timers, signals and `execute` are `SchedulerTests`' part).
@Suite("The epoll loop's descriptors")
struct EventLoopDescriptorTests {
    private let readable = EPOLLIN.rawValue

    /// Turns the loop until `done` holds, for at most `limit` (the loop waits at most 5 ms a turn).
    private func turn(_ loop: EventLoop, until done: () -> Bool, limit: Duration = .seconds(5)) throws {
        let deadline = loop.now + limit
        while !done() && loop.now < deadline { try loop.runOnce(timeoutMs: 5) }
    }

    @Test func aReadableDescriptorReachesItsHandler() throws {
        let loop = try EventLoop(signals: [])
        let pipe = try Pipe()
        var seen: [UInt32] = []
        _ = try loop.register(fd: pipe.reader, events: readable) { seen.append($0) }
        try loop.runOnce(timeoutMs: 0)
        #expect(seen == [])
        pipe.send()
        try turn(loop, until: { !seen.isEmpty })
        #expect(seen == [readable])
    }

    @Test func modifyStopsAndRestartsEvents() throws {
        let loop = try EventLoop(signals: [])
        let pipe = try Pipe()
        var count = 0
        let id = try loop.register(fd: pipe.reader, events: readable) { _ in count += 1 }
        pipe.send()
        try loop.modify(id, events: 0)
        try loop.runOnce(timeoutMs: 20)
        #expect(count == 0)
        try loop.modify(id, events: readable)
        try turn(loop, until: { count > 0 })
        #expect(count == 1)
        // Level-triggered: unread bytes wake it again.
        try loop.runOnce(timeoutMs: 20)
        #expect(count == 2)
        pipe.drain()
        try loop.runOnce(timeoutMs: 20)
        #expect(count == 2)
    }

    /// A registration's id, not its descriptor, decides who hears: the same fd registered anew is a new listener.
    @Test func aDeregisteredIDHearsNothingOnceItsDescriptorIsRegisteredAgain() throws {
        let loop = try EventLoop(signals: [])
        let pipe = try Pipe()
        var heard: [String] = []
        let old = try loop.register(fd: pipe.reader, events: readable) { _ in heard.append("old") }
        loop.deregister(old)
        _ = try loop.register(fd: pipe.reader, events: readable) { _ in heard.append("new") }
        pipe.send()
        try turn(loop, until: { !heard.isEmpty })
        #expect(heard == ["new"])
        // Twice is harmless, and so is modifying an id that is gone.
        loop.deregister(old)
        try loop.modify(old, events: readable)
    }

    @Test func aTimerSetByATimerAndADeadlineInThePastBothFire() throws {
        let loop = try EventLoop(signals: [])
        var fired: [String] = []
        loop.schedule(at: .zero) {
            fired.append("past")
            loop.schedule(at: loop.now + .milliseconds(5)) { fired.append("chained") }
        }
        #expect(loop.pendingTimerCount == 1)
        try turn(loop, until: { fired.count == 2 })
        #expect(fired == ["past", "chained"])
        #expect(loop.pendingTimerCount == 0)
    }
}

/// The embedded loop the connection's tests run on: interest is recorded, events come when handed over or when
/// `poll(2)` finds them, and time moves only when told.
@Suite("Embedded event loop")
struct EmbeddedEventLoopTests {
    @Test func interestAndEventsAreTheTestsToSeeAndGive() throws {
        let loop = EmbeddedEventLoop()
        let pipe = try Pipe()
        var seen: [UInt32] = []
        let id = try loop.register(fd: pipe.reader, events: EPOLLIN.rawValue) { seen.append($0) }
        #expect(loop.interest(of: pipe.reader) == EPOLLIN.rawValue)
        #expect(loop.runOnce() == 0)
        pipe.send()
        #expect(loop.runOnce() == 1)
        #expect(seen == [EPOLLIN.rawValue])
        try loop.modify(id, events: 0)
        #expect(loop.interest(of: pipe.reader) == 0)
        #expect(loop.runOnce() == 0)
        loop.deliver(EPOLLHUP.rawValue, to: pipe.reader)
        #expect(seen == [EPOLLIN.rawValue, EPOLLHUP.rawValue])
        loop.failNextModify = SystemError(errno: ENOMEM, call: "epoll_ctl(MOD)")
        #expect(throws: SystemError(errno: ENOMEM, call: "epoll_ctl(MOD)")) { try loop.modify(id, events: 1) }
        try loop.modify(id, events: EPOLLIN.rawValue)
        loop.deregister(id)
        #expect(loop.interest(of: pipe.reader) == nil)
        #expect(loop.runOnce() == 0)
        #expect(seen.count == 2)
    }

    @Test func aPeerThatHangsUpIsReportedUnasked() throws {
        let loop = EmbeddedEventLoop()
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        var seen: [UInt32] = []
        _ = try loop.register(fd: fds[0], events: 0) { seen.append($0) }
        close(fds[1])
        #expect(loop.runOnce() == 1)
        #expect(seen == [EPOLLHUP.rawValue])
    }

    @Test func timersRunOnTheManualClockOnly() {
        let loop = EmbeddedEventLoop()
        var fired: [String] = []
        loop.schedule(at: loop.now) { fired.append("now") }
        loop.schedule(at: loop.now + .milliseconds(500)) { fired.append("later") }
        #expect(fired == [])
        loop.runOnce()
        #expect(fired == ["now"])
        loop.advance(by: .milliseconds(499))
        #expect(fired == ["now"])
        loop.advance(by: .milliseconds(1))
        #expect(fired == ["now", "later"])
        #expect(loop.now == .milliseconds(500))
    }
}
