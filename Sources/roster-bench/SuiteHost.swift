import CRosterFloor
import Glibc

/// rosterd beside other busy processes. With every worker at SCHED_IDLE, two CPU hogs made a
/// `contacts.add` take 233 ms instead of 12 ms; only Argon2id may stand back now. With Argon2id still resting at
/// SCHED_IDLE until the watchdog's 500 ms and then at nice 10, a registration took 28–50× its idle time; a
/// starved hash is raised to the daemon's nice within milliseconds now, and the target is 3× idle.
extension Suite {
    /// `contacts.add` and `users.register` round trips on an idle host, then with one busy-looping process per
    /// CPU (each pinned to its own CPU, so the server's core and the client's both have one).
    func cpuHogs() throws {
        let database = try smallDatabase()
        let width = String(max(options.stormLogins, 200)).count
        var latencies: [String: [Double]] = [:]
        var registered = 0
        // Every CPU of the host, not only the client's (the benchmark pinned itself to one).
        let cpus = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        for _ in 0..<options.runs {
            for hogged in [false, true] {
                let server = try startRosterd(database: database)
                defer { server.stop() }
                let fd = try UnixSocket.connect(server.socketPath)
                defer { close(fd) }
                let owner = Seeder.userName(prefix: "storm", number: 1, width: width)
                let login = try RoundTrips.call(fd: fd, Requests.login(id: 1, username: owner, password: Seeder.password))
                guard login.contains("\"result\"") else { throw BenchError("log-in for the cpu-hogs scenario failed: \(login)") }
                let hogs = hogged ? try Hogs(count: cpus, workDir: workDir) : nil
                defer { hogs?.stop() }
                let label = hogged ? "with hogs" : "idle"
                let adds = try RoundTrips.measure(fd: fd, requests: (0..<50).map { Requests.addContact("Hog test \($0)", id: $0) },
                                                  count: options.hogAdds, warmup: min(10, options.hogAdds))
                var registrations = Samples()
                for _ in 0..<options.hogRegistrations {
                    registered += 1
                    let started = Clock.now()
                    let answer = try RoundTrips.call(fd: fd, Requests.register(id: registered, username: "hog\(getpid())x\(registered)",
                                                                               password: Seeder.password))
                    guard answer.contains("\"result\"") else { throw BenchError("a registration failed: \(answer)") }
                    registrations.add(Clock.microseconds(since: started))
                }
                for (name, measured) in [("contacts.add", adds), ("users.register", registrations)] {
                    var samples = measured
                    latencies["\(name) p50 \(label)", default: []].append(samples.percentile(50) / 1_000)
                    latencies["\(name) p99 \(label)", default: []].append(samples.percentile(99) / 1_000)
                }
            }
        }
        let scenario = "cpu-hogs (\(cpus) busy processes)"
        for name in ["contacts.add", "users.register"] {
            for percentile in ["p50", "p99"] {
                let idle = Spread(latencies["\(name) \(percentile) idle"] ?? [])
                let hogged = Spread(latencies["\(name) \(percentile) with hogs"] ?? [])
                record(scenario, "\(name) \(percentile), idle", unit: "ms", rosterd: idle.runs, floor: nil)
                let ratio = idle.median > 0 ? hogged.median / idle.median : nil
                // A log-in (its Argon2id run) must not starve beside busy processes: at most 3× its idle time.
                let target = name == "users.register" && percentile == "p50" ? "≤ 3× idle" : nil
                figures.append(Figure(scenario: scenario, metric: "\(name) \(percentile), with hogs", unit: "ms", rosterd: hogged,
                                      floor: nil, ratio: ratio, ratioOf: "of idle", target: target,
                                      met: target == nil ? nil : ratio.map { $0 <= 3 }))
            }
        }
        notes.append("cpu-hogs: \(options.hogAdds) contacts.add and \(options.hogRegistrations) users.register per run, "
                     + "one at a time; each hog is `roster-bench --spin` pinned to its own CPU at nice 0")
    }
}

/// Busy-looping child processes, one per CPU, killed on `stop`.
struct Hogs {
    private let pids: [pid_t]

    init(count: Int, workDir: String) throws(BenchError) {
        var pids: [pid_t] = []
        for cpu in 0..<max(1, count) {
            let pid = try spawn([selfExecutable(), "--spin"], environment: ["PATH=/usr/bin:/bin"], stderrPath: workDir + "/hog.stderr")
            // A child inherits the client's pinning; each hog gets a CPU of its own instead.
            _ = roster_pin_to_cpu(pid, Int32(cpu))
            pids.append(pid)
        }
        self.pids = pids
        // Let the scheduler see them as the CPU hogs they are before anything is measured.
        usleep(200_000)
    }

    func stop() {
        for pid in pids { kill(pid, SIGKILL) }
        var status: Int32 = 0
        for pid in pids { while waitpid(pid, &status, 0) < 0 && errno == EINTR {} }
    }
}
