import CLinux
import Glibc

/// Back-pressure (protocol.md §Limits): peers that send without reading. 150 connections of one uid pipeline
/// `contacts.list {limit:1000}` and never read; meanwhile an unrelated connection pings. Then 300 contacts forms whose
/// peers never read, while a writer adds contacts. rosterd only: the floor has no output to hold back.
extension Suite {
    func backPressure() throws {
        let database = workDir + "/back-pressure.db"
        let owner = "owner1"
        if access(database, F_OK) != 0 {
            try Seeder.seedContacts(databasePath: database, owner: owner, names: Seeder.contactNames(count: options.backPressureContacts),
                                    hash: try passwordHash())
        }
        var peaks: [Double] = [], afters: [Double] = [], baselines: [Double] = []
        var pingP50: [Double] = [], pingP99: [Double] = [], pingMax: [Double] = [], served: [Double] = []
        var addRates: [Double] = [], formPingMax: [Double] = [], aloneRates: [Double] = []
        var aloneCPU: [Double] = [], formsCPU: [Double] = [], drains: [Double] = []
        for _ in 0..<options.runs {
            let daemon = try startRosterd(database: database)
            defer { daemon.stop() }
            let token = try logIn(daemon, owner)
            let peers = try PeersNotReading(daemon: daemon, token: token, count: options.backPressurePeers,
                                            requests: options.backPressureRequests)
            baselines.append(mebibytes(peers.baseline))
            let probe = try UnixSocket.connect(daemon.socketPath)
            defer { close(probe) }
            var samples = Samples()
            var peak = daemon.residentBytes()
            let until = Clock.now() + UInt64(options.backPressureSeconds * 1e9)
            try peers.start()
            while Clock.now() < until {
                let started = Clock.now()
                _ = try RoundTrips.call(fd: probe, Requests.whoami)
                samples.add(Clock.microseconds(since: started))
                peak = max(peak, daemon.residentBytes())
                usleep(2_000)
            }
            served.append(Double(try stat("requests", probe)))
            peaks.append(mebibytes(peak))
            pingP50.append(samples.percentile(50))
            pingP99.append(samples.percentile(99))
            pingMax.append(samples.percentile(100))
            peers.close()
            // The trim follows the drain by at most a second (MemoryTrimPolicy.interval).
            usleep(2_000_000)
            afters.append(mebibytes(daemon.residentBytes()))
            drains.append(try secondsUntilThePoolIsIdle(probe))

            let alone = try writing(daemon, token: token)
            aloneRates.append(alone.addsPerSecond)
            aloneCPU.append(alone.cpuPerAdd)
            let beside = try formsNotReading(daemon, token: token)
            addRates.append(beside.addsPerSecond)
            formPingMax.append(beside.pingMax)
            formsCPU.append(beside.cpuPerAdd)
        }
        let peersScenario = "back-pressure: \(options.backPressurePeers) peers not reading"
        record(peersScenario, "daemon RSS before", unit: "MiB", rosterd: baselines, floor: nil)
        record(peersScenario, "daemon RSS, peak", unit: "MiB", rosterd: peaks, floor: nil, target: "< RSS before + 256 MiB") { mine, _ in
            mine.median < (Spread(baselines).median + 256)
        }
        record(peersScenario, "daemon RSS after they closed", unit: "MiB", rosterd: afters, floor: nil)
        record(peersScenario, "requests served while nobody read", unit: "", rosterd: served, floor: nil)
        record(peersScenario, "unrelated whoami p50", unit: "µs", rosterd: pingP50, floor: nil)
        record(peersScenario, "unrelated whoami p99", unit: "µs", rosterd: pingP99, floor: nil, target: "≤ 50 ms") { mine, _ in
            mine.median <= 50_000
        }
        record(peersScenario, "unrelated whoami max", unit: "µs", rosterd: pingMax, floor: nil)
        record(peersScenario, "workers idle, after RSS was read", unit: "s", rosterd: drains, floor: nil)
        let formsScenario = "back-pressure: \(options.backPressureForms) forms not reading"
        record(formsScenario, "writer's contacts.add, no form open", unit: "adds/s", rosterd: aloneRates, floor: nil)
        record(formsScenario, "writer's contacts.add", unit: "adds/s", rosterd: addRates, floor: nil)
        record(formsScenario, "daemon CPU per add, no form open", unit: "ms", rosterd: aloneCPU, floor: nil)
        record(formsScenario, "daemon CPU per add", unit: "ms", rosterd: formsCPU, floor: nil)
        record(formsScenario, "whoami max beside the writer", unit: "µs", rosterd: formPingMax, floor: nil)
        notes.append("back-pressure: \(options.backPressureContacts) contacts; each of \(options.backPressurePeers) peers sent "
                     + "\(options.backPressureRequests) contacts.list {limit:1000} and read nothing for "
                     + "\(options.backPressureSeconds) s while another connection pinged whoami every 2 ms; then "
                     + "\(options.backPressureForms) contacts forms searched \"a\", filled their sockets with rpc.describe and "
                     + "read nothing while one connection added contacts one at a time, with a whoami after each")
    }

    /// The owner's session token, for the many connections that resume it.
    private func logIn(_ daemon: ServerProcess, _ owner: String) throws -> String {
        let fd = try UnixSocket.connect(daemon.socketPath)
        defer { close(fd) }
        let answer = try RoundTrips.call(fd: fd, Requests.login(id: 1, username: owner, password: Seeder.password))
        guard let start = answer.range(of: "\"token\":\"")?.upperBound,
              let end = answer[start...].firstIndex(of: "\"") else { throw BenchError("log-in failed: \(answer)") }
        return String(answer[start..<end])
    }

    /// A number from `admin.stats`.
    private func stat(_ name: String, _ fd: Int32) throws -> Int {
        let stats = try RoundTrips.call(fd: fd, Array("{\"id\":1,\"method\":\"admin.stats\"}\n".utf8))
        guard let start = stats.range(of: "\"\(name)\":")?.upperBound else { return 0 }
        return Int(stats[start...].prefix { $0.isNumber }) ?? 0
    }

    /// Work queued for the peers that left must not be measured as the writer's: wait until none is waiting.
    private func secondsUntilThePoolIsIdle(_ fd: Int32) throws -> Double {
        let started = Clock.now()
        while try stat("hash_queue", fd) > 0 && Clock.now() - started < 120_000_000_000 { usleep(10_000) }
        return Double(Clock.now() - started) / 1e9
    }

    /// Contacts forms whose peers never read, with a query that matches much of the book typed in, then a writer
    /// adding contacts: adds per second, and the worst ping beside them.
    private func formsNotReading(_ daemon: ServerProcess, token: String) throws -> Writing {
        var forms: [Int32] = []
        defer { for fd in forms { close(fd) } }
        let filler = Array((0..<40).map { Requests.line(id: $0, method: "rpc.describe", params: "{}") }.joined())
        for _ in 0..<options.backPressureForms {
            let fd = try UnixSocket.connect(daemon.socketPath)
            forms.append(fd)
            _ = try RoundTrips.call(fd: fd, Requests.resume(token))
            PeersNotReading.shrinkReceiveBuffer(fd)
            try UnixSocket.writeAll(fd, Requests.openContacts + Requests.contactsQuery("a") + filler)
        }
        // Until every form's socket is full: from then on none of them reads what it is sent.
        usleep(1_000_000)
        return try writing(daemon, token: token)
    }

    /// One connection adding contacts one at a time for the scenario's seconds, with a whoami after each.
    private func writing(_ daemon: ServerProcess, token: String) throws -> Writing {
        let writer = try UnixSocket.connect(daemon.socketPath)
        defer { close(writer) }
        _ = try RoundTrips.call(fd: writer, Requests.resume(token))
        var worst = 0.0
        var adds = 0
        let cpu = daemon.cpuSeconds()
        let started = Clock.now()
        let until = started + UInt64(options.backPressureSeconds * 1e9)
        while Clock.now() < until {
            let answer = try RoundTrips.call(fd: writer, Requests.addContact("Added \(adds)"))
            guard answer.contains("\"result\"") else { throw BenchError("contacts.add failed: \(answer)") }
            adds += 1
            let pinged = Clock.now()
            _ = try RoundTrips.call(fd: writer, Requests.whoami)
            worst = max(worst, Clock.microseconds(since: pinged))
        }
        return Writing(addsPerSecond: Double(adds) / (Double(Clock.now() - started) / 1e9), pingMax: worst,
                       cpuPerAdd: (daemon.cpuSeconds() - cpu) * 1_000 / Double(max(adds, 1)))
    }

    /// What one writer saw: its rate, its worst ping, and the daemon's CPU time per add (all threads), which the
    /// disk and the other processes on a shared host affect far less than the rate.
    struct Writing {
        let addsPerSecond: Double
        let pingMax: Double
        let cpuPerAdd: Double
    }

    private func mebibytes(_ bytes: Int) -> Double { Double(bytes) / 1_048_576 }
}

/// Connections of one user that each send a burst of requests and then never read.
final class PeersNotReading {
    let baseline: Int
    private var fds: [Int32] = []
    private let burst: [UInt8]

    init(daemon: ServerProcess, token: String, count: Int, requests: Int) throws {
        for _ in 0..<count {
            let fd = try UnixSocket.connect(daemon.socketPath)
            fds.append(fd)
            _ = try RoundTrips.call(fd: fd, Requests.resume(token))
            Self.shrinkReceiveBuffer(fd)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        burst = Array((0..<requests).map { Requests.line(id: $0, method: "contacts.list", params: "{\"limit\":1000}") }.joined())
        usleep(200_000)
        baseline = daemon.residentBytes()
    }

    /// Sends each peer's burst, as much as its socket takes (a daemon that stops reading leaves the rest unsent).
    func start() throws {
        for fd in fds {
            _ = burst.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        }
    }

    func close() {
        for fd in fds { Glibc.close(fd) }
        fds = []
    }

    static func shrinkReceiveBuffer(_ fd: Int32) {
        var small: Int32 = 4_096
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
    }
}
