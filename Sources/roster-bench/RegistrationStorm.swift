import Glibc
import RosterCrypto

/// `users.register` back to back on many connections, closed loop (a connection's next registration goes out
/// when its answer comes), over one daemon or several. The rate counts the registrations answered within the
/// measured window, after a warm-up in which every hashing worker filled up.
struct RegistrationStorm {
    struct Result {
        var registered = 0
        var refused = 0
        /// The first refusal's answer, to say why.
        var firstRefusal: String?
        var seconds: Double = 0
        /// Round trips of the registrations sent within the window (closed loop: they include the queue).
        var latencies = Samples()
        /// The daemons' CPU time over the storm's wall time (set by the caller, which knows the processes).
        var daemonCores: Double = 0
        var perSecond: Double { seconds > 0 ? Double(registered) / seconds : 0 }
    }

    let password: String
    let warmupSeconds: Double
    let seconds: Double
    /// The `n`th registration's username (n from 1), distinct for every n.
    let name: (Int) -> String

    /// Runs on `fds` (blocking sockets to the daemons, one registration in flight on each) and leaves every
    /// answer read.
    func run(connections fds: [Int32]) throws(BenchError) -> Result {
        var buffers = fds.map { _ in LineBuffer(capacity: 4_096) }
        var sentAt = [UInt64](repeating: 0, count: fds.count)
        var waiting = [Bool](repeating: false, count: fds.count)
        var watched = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        var result = Result()
        var sent = 0
        let started = Clock.now()
        let measureFrom = started + UInt64(warmupSeconds * 1e9)
        let end = measureFrom + UInt64(seconds * 1e9)
        func send(_ index: Int) throws(BenchError) {
            sent += 1
            sentAt[index] = Clock.now()
            waiting[index] = true
            try UnixSocket.writeAll(fds[index], Requests.register(id: sent, username: name(sent), password: password))
        }
        for index in fds.indices { try send(index) }
        while waiting.contains(true) {
            guard Clock.now() < end + 60_000_000_000 else { throw BenchError("registrations still unanswered 60 s after the end") }
            guard poll(&watched, nfds_t(watched.count), 100) >= 0 || errno == EINTR else { throw BenchError("poll failed") }
            for index in fds.indices where watched[index].revents != 0 {
                if buffers[index].read(from: fds[index]) == .closed { throw BenchError("a daemon closed a registering connection") }
                var answer: String?
                buffers[index].drainLines { line in
                    if !line.contains("\"method\":\"event\"") { answer = String(decoding: line, as: UTF8.self) }
                }
                guard let answer else { continue }
                let now = Clock.now()
                waiting[index] = false
                if now >= measureFrom && now <= end {
                    if answer.contains("\"result\"") {
                        result.registered += 1
                        if sentAt[index] >= measureFrom { result.latencies.add(Double(now - sentAt[index]) / 1_000) }
                    } else {
                        result.refused += 1
                        if result.firstRefusal == nil { result.firstRefusal = answer }
                    }
                }
                if now < end { try send(index) }
            }
        }
        result.seconds = seconds
        return result
    }
}

/// The rate registrations cannot beat: every core hashing, one Argon2id hash at a time each (cores ÷
/// one hash's time).
struct HashBound {
    let cores: Int
    let secondsPerHash: Double

    var registrationsPerSecond: Double { secondsPerHash > 0 ? Double(cores) / secondsPerHash : 0 }

    /// The target: at least 0.9 of the bound, so that storage and dispatch cost little beside the hashing.
    func isMet(by rate: Double) -> Bool { rate >= 0.9 * registrationsPerSecond }

    /// One hash with the daemon's default parameters, timed in this process: the median of `hashes` after one
    /// unmeasured (the first pays for the 19 MiB's page faults).
    static func measure(cores: Int, hashes: Int = 5) throws -> HashBound {
        let hasher = try PasswordHasher()
        _ = try hasher.hash(Seeder.password)
        var samples = Samples()
        for _ in 0..<max(1, hashes) {
            let started = Clock.now()
            _ = try hasher.hash(Seeder.password)
            samples.add(Double(Clock.now() - started) / 1e9)
        }
        return HashBound(cores: cores, secondsPerHash: samples.percentile(50))
    }
}
