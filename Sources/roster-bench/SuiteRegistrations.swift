import CRosterFloor
import Glibc

/// Registrations per second against the hash-bound rate, on one daemon and on two sharing one
/// PostgreSQL database, and how soon a name registered on one daemon is `taken` on the other's open form.
/// The daemons here are never pinned: the bound counts every core of the host.
extension Suite {
    func registrations() throws {
        let bound = try hashBound()
        let (database, _) = try storage.database("registrations")
        var runs: [RegistrationStorm.Result] = []
        for run in 0..<options.runs {
            let daemon = try startRosterd(database: database, pinned: false)
            defer { daemon.stop() }
            runs.append(try registrationStorm(daemons: [daemon], tag: "r\(run)"))
        }
        recordRegistrations("registrations, one daemon", runs, bound: bound)
    }

    func crossDaemon() throws {
        let bound = try hashBound()
        // rosterd makes the schema on the empty database as it starts (the second waits on the first's lock).
        let (database, _) = try storage.database("cross")
        var watches: [TakenWatch.Result] = []
        var storms: [RegistrationStorm.Result] = []
        for run in 0..<options.runs {
            let first = try startRosterd(database: database, socketPath: workDir + "/a.sock", name: "rosterd-a", pinned: false)
            defer { first.stop() }
            let second = try startRosterd(database: database, socketPath: workDir + "/b.sock", name: "rosterd-b", pinned: false)
            defer { second.stop() }
            let a = try UnixSocket.connect(first.socketPath)
            defer { close(a) }
            let b = try UnixSocket.connect(second.socketPath)
            defer { close(b) }
            let names = (0..<options.crossDaemonNames).map { "x\(getpid())r\(run)n\($0)" }
            watches.append(try TakenWatch(names: names, password: Seeder.password).run(a: a, b: b))
            storms.append(try registrationStorm(daemons: [first, second], tag: "y\(run)"))
        }
        let scenario = "cross-daemon (2 rosterd, 1 database)"
        var afterAnswer = watches.map(\.afterAnswer)
        var registration = watches.map(\.registration)
        record(scenario, "taken on B after A's answer, p50", unit: "µs", rosterd: afterAnswer.indices.map { afterAnswer[$0].percentile(50) },
               floor: nil)
        record(scenario, "taken on B after A's answer, p99", unit: "µs", rosterd: afterAnswer.indices.map { afterAnswer[$0].percentile(99) },
               floor: nil, target: "≤ 20000 µs") { mine, _ in mine.median <= 20_000 }
        record(scenario, "taken on B after A's answer, max", unit: "µs", rosterd: afterAnswer.indices.map { afterAnswer[$0].percentile(100) },
               floor: nil)
        record(scenario, "taken never heard (of \(options.crossDaemonNames))", unit: "", rosterd: watches.map { Double($0.missed) },
               floor: nil, target: "0") { mine, _ in mine.max == 0 }
        record(scenario, "registration on A alone, p50", unit: "µs", rosterd: registration.indices.map { registration[$0].percentile(50) },
               floor: nil)
        recordRegistrations(scenario, storms, bound: bound)
    }

    /// 4 connections per core of the host, spread over `daemons` in turn: enough to keep every hashing worker
    /// of every daemon busy. Also how many cores the daemons used meanwhile, to tell a slow hash from a starved one.
    private func registrationStorm(daemons: [ServerProcess], tag: String) throws -> RegistrationStorm.Result {
        var fds: [Int32] = []
        defer { fds.forEach { close($0) } }
        for index in 0..<(4 * hostCores) { fds.append(try UnixSocket.connect(daemons[index % daemons.count].socketPath)) }
        let prefix = "g\(getpid())\(tag)n"
        let storm = RegistrationStorm(password: Seeder.password, warmupSeconds: options.registrationSeconds / 4,
                                      seconds: options.registrationSeconds, name: { prefix + String($0) })
        let cpuBefore = daemons.reduce(0) { $0 + $1.cpuSeconds() }
        let started = Clock.now()
        var result = try storm.run(connections: fds)
        let wall = Double(Clock.now() - started) / 1e9
        result.daemonCores = wall > 0 ? (daemons.reduce(0) { $0 + $1.cpuSeconds() } - cpuBefore) / wall : 0
        return result
    }

    private func recordRegistrations(_ scenario: String, _ runs: [RegistrationStorm.Result], bound: HashBound) {
        let rates = Spread(runs.map(\.perSecond))
        let limit = bound.registrationsPerSecond
        figures.append(Figure(scenario: scenario, metric: "registrations/s", unit: "/s", rosterd: rates, floor: nil,
                              ratio: limit > 0 ? rates.median / limit : nil, ratioOf: "of hash-bound",
                              target: "≥ 0.9× hash-bound", met: bound.isMet(by: rates.median)))
        record(scenario, "hash-bound (\(bound.cores) cores ÷ one hash)", unit: "/s", rosterd: [limit], floor: nil)
        var latencies = runs.map(\.latencies)
        record(scenario, "registration round trip p50 (closed loop)", unit: "ms",
               rosterd: latencies.indices.map { latencies[$0].percentile(50) / 1_000 }, floor: nil)
        record(scenario, "registrations refused", unit: "", rosterd: runs.map { Double($0.refused) }, floor: nil)
        record(scenario, "daemon CPU meanwhile (cores busy)", unit: "", rosterd: runs.map(\.daemonCores), floor: nil)
        if let refusal = runs.compactMap(\.firstRefusal).first { notes.append("\(scenario): a refusal: \(refusal)") }
    }

    /// The bound, measured once per run of the benchmark, before any daemon hashes beside it.
    func hashBound() throws -> HashBound {
        if let cachedBound { return cachedBound }
        let bound = try HashBound.measure(cores: hostCores)
        cachedBound = bound
        notes.append("hash-bound: one Argon2id hash (m=19456 KiB, t=2) took "
                     + String(format: "%.1f", bound.secondsPerHash * 1_000) + " ms here (median of 5), "
                     + "so \(bound.cores) cores bound registrations at "
                     + String(format: "%.1f", bound.registrationsPerSecond) + "/s")
        return bound
    }
}
