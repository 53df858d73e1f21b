import Glibc

/// The scenarios on a small database: ping-pong, pipelined, typing, idle memory and the log-in storm.
extension Suite {
    /// A database with the storm's accounts (and so a few users for every check to look past).
    func smallDatabase() throws -> BenchDatabase {
        try seededUsers("small", prefix: "storm", count: max(options.stormLogins, 200))
    }

    func pingPong() throws {
        let request = Requests.checkUsername("alice12345")
        let count = options.roundTrips
        let results = try alternate(database: try smallDatabase()) { server in
            let fd = try UnixSocket.connect(server.socketPath)
            defer { close(fd) }
            var samples = try RoundTrips.measure(fd: fd, requests: [request], count: count, warmup: count / 10)
            return [samples.percentile(50), samples.percentile(99), samples.percentile(99.9)]
        }
        for (column, name) in ["p50", "p99", "p999"].enumerated() {
            let mine = results.rosterd.map { $0[column] }
            let floor = results.floor.map { $0[column] }
            if column == 0 {
                record("ping-pong check_username", name, unit: "µs", rosterd: mine, floor: floor, target: "≤ 1.2× floor") {
                    $0.median <= 1.2 * ($1?.median ?? 0)
                }
            } else {
                record("ping-pong check_username", name, unit: "µs", rosterd: mine, floor: floor)
            }
        }
    }

    func pipelined() throws {
        let request = Requests.checkUsername("alice12345")
        let options = self.options
        let results = try alternate(database: try smallDatabase()) { server in
            try Pipelined.measure(socketPath: server.socketPath, connections: options.pipelinedConnections,
                                  depth: options.pipelinedDepth, request: request,
                                  warmupSeconds: options.pipelinedSeconds / 4, seconds: options.pipelinedSeconds)
        }
        record("pipelined \(options.pipelinedConnections)×\(options.pipelinedDepth)", "answers/s", unit: "/s",
               rosterd: results.rosterd, floor: results.floor, target: "≥ 0.15× floor") {
            $0.median >= 0.15 * ($1?.median ?? .infinity)
        }
    }

    private func typingRun(_ server: ServerProcess, storm: Typing.Storm?) throws -> Typing.Result {
        var typing = Typing(socketPath: server.socketPath, sessions: options.sessions,
                            keystrokeInterval: options.keystrokeIntervalMs / 1_000, warmupSeconds: 0.5,
                            seconds: options.typingSeconds, echo: server.kind == .floor)
        typing.storm = storm
        return try typing.run()
    }

    func typing() throws {
        let results = try alternate(database: try smallDatabase()) { server in
            var result = try typingRun(server, storm: nil)
            return [result.idle.percentile(50), result.idle.percentile(99),
                    server.kind == .floor ? result.linesPerSecond : result.eventsPerSecond,
                    Double(result.skipped), Double(result.keystrokes)]
        }
        let scenario = "typing \(options.sessions) sessions"
        record(scenario, "p50 input→final", unit: "µs", rosterd: results.rosterd.map { $0[0] }, floor: results.floor.map { $0[0] })
        record(scenario, "p99 input→final", unit: "µs", rosterd: results.rosterd.map { $0[1] },
               floor: results.floor.map { $0[1] }, target: "≤ 2000 µs") { mine, _ in mine.median <= 2_000 }
        record(scenario, "events/s (floor: lines/s)", unit: "/s", rosterd: results.rosterd.map { $0[2] },
               floor: results.floor.map { $0[2] })
        record(scenario, "keystrokes skipped (busy)", unit: "", rosterd: results.rosterd.map { $0[3] },
               floor: results.floor.map { $0[3] })
        notes.append("typing: each session types every \(Int(options.keystrokeIntervalMs)) ms "
                     + "(\(Int(Double(options.sessions) * 1_000 / options.keystrokeIntervalMs)) form.input/s in all); "
                     + "\(Int(results.rosterd.first?[4] ?? 0)) keystrokes measured per run")
    }

    func loginStorm() throws {
        let database = try smallDatabase()
        var idle: [Double] = []
        var storm: [Double] = []
        var seconds: [Double] = []
        var failures: [Double] = []
        let width = String(max(options.stormLogins, 200)).count
        for _ in 0..<options.runs {
            let server = try startRosterd(database: database)
            defer { server.stop() }
            let plan = Typing.Storm(connections: options.stormLogins,
                                    username: { Seeder.userName(prefix: "storm", number: $0 + 1, width: width) },
                                    password: Seeder.password, after: options.typingSeconds / 2)
            var result = try typingRun(server, storm: plan)
            idle.append(result.idle.percentile(99))
            storm.append(result.storm.percentile(99))
            seconds.append(result.stormSeconds)
            failures.append(Double(result.stormFailures))
        }
        let scenario = "log-in storm (\(options.stormLogins) log-ins)"
        record(scenario, "typing p99, idle", unit: "µs", rosterd: idle, floor: nil)
        let mine = Spread(storm)
        let base = Spread(idle)
        let ratio = base.median > 0 ? mine.median / base.median : nil
        figures.append(Figure(scenario: scenario, metric: "typing p99, during storm", unit: "µs", rosterd: mine, floor: nil,
                              ratio: ratio, ratioOf: "of idle", target: "≤ 2× idle", met: ratio.map { $0 <= 2 }))
        record(scenario, "storm duration", unit: "s", rosterd: seconds, floor: nil)
        record(scenario, "log-ins refused", unit: "", rosterd: failures, floor: nil)
    }

    func idleMemory() throws {
        let connections = options.idleConnections
        let results = try alternate(database: try smallDatabase()) { server in
            try IdleMemory.measure(server: server, connections: connections)
        }
        record("idle \(connections) connections", "RSS per connection", unit: "B", rosterd: results.rosterd,
               floor: results.floor, target: "≤ 16384 B") { mine, _ in mine.median <= 16_384 }
    }
}
