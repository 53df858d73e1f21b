import Glibc

/// The live `taken` event across daemons sharing PostgreSQL (protocol.md §Storage: within 50 ms): B's open register
/// form holds a free name, A registers it, and the time from A's answer to B's `taken` event for that input is one
/// sample. B may hear before A's answer is read (the NOTIFY leaves at the commit, the answer after it), so a sample can
/// be negative.
struct TakenWatch {
    struct Result {
        /// µs from A's answer to B's `taken`.
        var afterAnswer = Samples()
        /// µs from A's request to its answer (one Argon2id hash and the insert).
        var registration = Samples()
        /// Names whose `taken` did not come within `patience` of A's answer.
        var missed = 0
    }

    let names: [String]
    let password: String
    /// How long after A's answer B's event may take before the name counts as missed, in seconds.
    var patience = 2.0

    /// `a` and `b` are blocking connections to two daemons sharing one database.
    func run(a: Int32, b: Int32) throws(BenchError) -> Result {
        var formLines = LineBuffer(capacity: 4_096)
        var answerLines = LineBuffer(capacity: 4_096)
        try UnixSocket.writeAll(b, Requests.hello(id: 1, debounceMs: 0) + Requests.openRegister(id: 2))
        try Self.wait(b, &formLines, seconds: 10, what: "B's register form to open") { line in
            line.integer(after: "\"id\":") == 2 && !line.contains("\"method\":\"event\"")
        }
        var result = Result()
        for (index, name) in names.enumerated() {
            let rev = index + 1
            try UnixSocket.writeAll(b, Requests.input(id: 10 + index, value: name))
            var verdict = ""
            try Self.wait(b, &formLines, seconds: 10, what: "B's verdict on \(name)") { line in
                guard Self.isUsernameVerdict(line, rev: rev) else { return false }
                verdict = String(decoding: line, as: UTF8.self)
                return true
            }
            guard verdict.contains("\"code\":\"available\"") else { throw BenchError("B's form on the fresh name \(name): \(verdict)") }

            let sent = Clock.now()
            try UnixSocket.writeAll(a, Requests.register(id: 10 + index, username: name, password: password))
            var answered: UInt64?
            var heard: UInt64?
            var watched = [pollfd(fd: a, events: Int16(POLLIN), revents: 0), pollfd(fd: b, events: Int16(POLLIN), revents: 0)]
            while answered == nil || heard == nil {
                let now = Clock.now()
                if let answered, now - answered > UInt64(patience * 1e9) { break }
                guard now - sent < 60_000_000_000 else { throw BenchError("A did not answer the registration of \(name)") }
                guard poll(&watched, 2, 50) >= 0 || errno == EINTR else { throw BenchError("poll failed") }
                if watched[0].revents != 0 {
                    if answerLines.read(from: a) == .closed { throw BenchError("A closed the connection") }
                    var failure: String?
                    answerLines.drainLines { line in
                        guard !line.contains("\"method\":\"event\"") else { return }
                        answered = Clock.now()
                        if !line.contains("\"result\"") { failure = String(decoding: line, as: UTF8.self) }
                    }
                    if let failure { throw BenchError("A refused the registration of \(name): \(failure)") }
                }
                if watched[1].revents != 0 {
                    if formLines.read(from: b) == .closed { throw BenchError("B closed the connection") }
                    formLines.drainLines { line in
                        if Self.isUsernameVerdict(line, rev: rev) && line.contains("\"code\":\"taken\"") { heard = Clock.now() }
                    }
                }
            }
            guard let answered else { continue }
            result.registration.add(Double(answered - sent) / 1_000)
            if let heard {
                result.afterAnswer.add(Self.signedMicroseconds(from: answered, to: heard))
            } else {
                result.missed += 1
            }
        }
        return result
    }

    /// A final `field` event of the register form's username for `rev`.
    static func isUsernameVerdict(_ line: UnsafeRawBufferPointer, rev: Int) -> Bool {
        line.contains("\"type\":\"field\"") && line.contains("\"form\":\"register\"") && line.contains("\"field\":\"username\"")
            && !line.contains("\"state\":\"validating\"") && line.integer(after: "\"rev\":") == rev
    }

    static func signedMicroseconds(from start: UInt64, to end: UInt64) -> Double {
        Double(Int64(bitPattern: end &- start)) / 1_000
    }

    /// Reads lines from `fd` until `matches` says yes, for at most `seconds`.
    private static func wait(_ fd: Int32, _ buffer: inout LineBuffer, seconds: Double, what: String,
                             _ matches: (UnsafeRawBufferPointer) -> Bool) throws(BenchError) {
        let deadline = Clock.now() + UInt64(seconds * 1e9)
        var found = false
        var watched = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while !found {
            guard Clock.now() < deadline else { throw BenchError("no answer after \(Int(seconds)) s waiting for \(what)") }
            guard poll(&watched, 1, 50) >= 0 || errno == EINTR else { throw BenchError("poll failed") }
            guard watched.revents != 0 else { continue }
            if buffer.read(from: fd) == .closed { throw BenchError("the daemon closed the connection waiting for \(what)") }
            buffer.drainLines { line in
                if !found && matches(line) { found = true }
            }
        }
    }
}
