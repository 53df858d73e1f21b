import CLinux
import Glibc

/// Sessions typing into the register form (debounce 0): each keystroke is a `form.input` of the username
/// field, and its latency runs until the final `field` event (`empty`, `valid` or `invalid`) for that rev.
///
/// Keystrokes are scheduled open-loop, spread evenly over all sessions at `keystrokeInterval` each, the
/// pace of a person typing; a session whose previous keystroke is still unanswered skips its turn (and the
/// skip is counted), so a slow server cannot hide behind a slower client. Typed values run through the
/// prefixes of a 10-character name, so half the keystrokes fail a local rule at once and half ask the
/// user database. Against the floor the echo of the `form.input` line stands for its final event.
///
/// An optional log-in storm sends `auth.login` on other connections all at once; keystrokes sent while
/// those are unanswered are measured apart.
struct Typing {
    struct Storm {
        let connections: Int
        let username: (Int) -> String
        let password: String
        /// When the storm starts, in seconds after the warm-up ends.
        let after: Double
    }

    struct Result {
        var idle = Samples()
        var storm = Samples()
        var eventsPerSecond: Double = 0
        var linesPerSecond: Double = 0
        var skipped = 0
        var keystrokes = 0
        var stormSeconds: Double = 0
        var stormFailures = 0
    }

    let socketPath: String
    let sessions: Int
    let keystrokeInterval: Double
    let warmupSeconds: Double
    let seconds: Double
    let echo: Bool
    var storm: Storm?

    private final class Session {
        let fd: Int32
        let name: [Character]
        var buffer = LineBuffer(capacity: 4_096)
        var setupAnswers = 0
        var rev = 0
        var typed = 0
        var pendingSince: UInt64?
        var pendingInStorm = false

        init(fd: Int32, name: String) {
            self.fd = fd
            self.name = Array(name)
        }

        /// The next value: prefixes of the name, 1 to 10 characters, over and over.
        func nextValue() -> String {
            typed = typed % name.count + 1
            return String(name[0..<typed])
        }
    }

    func run() throws(BenchError) -> Result {
        let epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epollFD >= 0 else { throw BenchError("epoll_create1 failed") }
        var sessions: [Session] = []
        var stormFDs: [Int32] = []
        defer {
            for session in sessions { close(session.fd) }
            for fd in stormFDs { close(fd) }
            close(epollFD)
        }
        func watch(_ fd: Int32, _ tag: Int) {
            var event = epoll_event()
            event.events = EPOLLIN.rawValue
            event.data.u64 = UInt64(tag)
            epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event)
        }
        for index in 0..<self.sessions {
            let fd = try UnixSocket.connect(socketPath, nonBlocking: true)
            let session = Session(fd: fd, name: "t" + Seeder.userName(prefix: "", number: index, width: 5) + "qxyz")
            sessions.append(session)
            watch(fd, index)
            try UnixSocket.writeAll(fd, Requests.hello(id: 1, debounceMs: 0) + Requests.openRegister(id: 2))
        }
        var stormBuffers: [LineBuffer] = []
        if let storm {
            for index in 0..<storm.connections {
                let fd = try UnixSocket.connect(socketPath, nonBlocking: true)
                stormFDs.append(fd)
                stormBuffers.append(LineBuffer(capacity: 4_096))
                watch(fd, self.sessions + index)
            }
        }

        var events = [epoll_event](repeating: epoll_event(), count: 256)
        var result = Result()
        // Set-up: every session's hello and form.open answered before anybody types.
        var ready = 0
        let setupDeadline = Clock.now() + 60_000_000_000
        while ready < sessions.count {
            guard Clock.now() < setupDeadline else { throw BenchError("typing sessions were not set up in 60 s") }
            let count = events.withUnsafeMutableBufferPointer { epoll_wait(epollFD, $0.baseAddress, 256, 100) }
            for slot in 0..<Int(max(count, 0)) {
                let index = Int(events[slot].data.u64)
                guard index < sessions.count else { continue }
                let session = sessions[index]
                while session.buffer.read(from: session.fd) == .data {}
                session.buffer.drainLines { line in
                    if line.contains("\"id\":1,") || line.contains("\"id\":2,") {
                        session.setupAnswers += 1
                        if session.setupAnswers == 2 { ready += 1 }
                    }
                }
            }
        }

        let started = Clock.now()
        let measureFrom = started + UInt64(warmupSeconds * 1e9)
        let stormAt = storm.map { measureFrom + UInt64($0.after * 1e9) }
        var stormStarted: UInt64?
        var stormEnded: UInt64?
        var stormAnswers = 0
        let plannedEnd = measureFrom + UInt64(seconds * 1e9)
        let period = keystrokeInterval * 1e9
        var sequence = 0
        var eventLines = 0
        var allLines = 0
        var now = started

        while true {
            now = Clock.now()
            let stormRunning = stormStarted != nil && stormEnded == nil
            if now >= plannedEnd && !stormRunning && (storm == nil || stormEnded != nil) { break }
            if now > plannedEnd + 120_000_000_000 { throw BenchError("the log-in storm did not finish within 120 s") }
            if let stormAt, stormStarted == nil, now >= stormAt, let storm {
                stormStarted = now
                for (index, fd) in stormFDs.enumerated() {
                    try UnixSocket.writeAll(fd, Requests.login(id: 9, username: storm.username(index), password: storm.password))
                }
            }
            // Every keystroke that is due goes out now.
            while true {
                let due = started + UInt64(Double(sequence) * period / Double(sessions.count))
                guard due <= now else { break }
                let session = sessions[sequence % sessions.count]
                sequence += 1
                if session.pendingSince != nil {
                    if due >= measureFrom { result.skipped += 1 }
                    continue
                }
                session.rev += 1
                session.pendingSince = now
                session.pendingInStorm = stormStarted != nil && stormEnded == nil
                if due >= measureFrom { result.keystrokes += 1 }
                try UnixSocket.writeAll(session.fd, Requests.input(id: session.rev + 2, value: session.nextValue()))
            }
            let nextDue = started + UInt64(Double(sequence) * period / Double(sessions.count))
            let waitMs: Int32 = nextDue > now + 2_000_000 ? Int32((nextDue - now) / 1_000_000) - 1 : 0
            let count = events.withUnsafeMutableBufferPointer { epoll_wait(epollFD, $0.baseAddress, 256, waitMs) }
            now = Clock.now()
            let measuring = now >= measureFrom
            for slot in 0..<Int(max(count, 0)) {
                let index = Int(events[slot].data.u64)
                if index >= sessions.count {
                    let stormIndex = index - sessions.count
                    while stormBuffers[stormIndex].read(from: stormFDs[stormIndex]) == .data {}
                    stormBuffers[stormIndex].drainLines { line in
                        guard line.contains("\"id\":9,") else { return }
                        stormAnswers += 1
                        if line.contains("\"error\"") { result.stormFailures += 1 }
                    }
                    if stormAnswers == stormFDs.count && stormEnded == nil { stormEnded = now }
                    continue
                }
                let session = sessions[index]
                while session.buffer.read(from: session.fd) == .data {}
                let expectedID = session.rev + 2
                let lines = session.buffer.drainLines { line in
                    if line.contains("\"method\":\"event\"") && measuring { eventLines += 1 }
                    guard let since = session.pendingSince else { return }
                    let final: Bool
                    if echo {
                        final = line.integer(after: "\"id\":") == expectedID
                    } else {
                        final = line.contains("\"type\":\"field\"") && line.contains("\"field\":\"username\"")
                            && !line.contains("\"state\":\"validating\"") && line.integer(after: "\"rev\":") == session.rev
                    }
                    guard final else { return }
                    session.pendingSince = nil
                    guard since >= measureFrom else { return }
                    let latency = Double(now - since) / 1_000
                    if session.pendingInStorm { result.storm.add(latency) } else { result.idle.add(latency) }
                }
                if measuring { allLines += lines }
            }
        }
        let measured = Double(now - measureFrom) / 1e9
        result.eventsPerSecond = Double(eventLines) / measured
        result.linesPerSecond = Double(allLines) / measured
        if let stormStarted, let stormEnded { result.stormSeconds = Double(stormEnded - stormStarted) / 1e9 }
        return result
    }
}
