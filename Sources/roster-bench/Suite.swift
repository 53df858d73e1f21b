import CRosterFloor
import Glibc

/// Runs the chosen scenarios against the floor and rosterd and collects the figures.
final class Suite {
    let options: BenchOptions
    let workDir: String
    let socketPath: String
    let rosterdBinary: String
    /// The servers' core, when there are two cores or more (the client takes another).
    let serverCPU: Int?
    let pinning: String
    var figures: [Figure] = []
    var notes: [String] = []
    private var cachedHash: String?

    init(options: BenchOptions) throws(BenchError) {
        self.options = options
        if let directory = options.workDir {
            _ = mkdir(directory, 0o700)
            workDir = directory
        } else {
            var template = Array("/tmp/roster-bench-XXXXXX".utf8CString)
            guard let made = template.withUnsafeMutableBufferPointer({ $0.baseAddress.flatMap { mkdtemp($0) } }) else {
                throw BenchError("mkdtemp failed")
            }
            workDir = String(cString: made)
        }
        socketPath = workDir + "/bench.sock"
        let sibling = String(selfExecutable().dropLast("roster-bench".count)) + "rosterd"
        rosterdBinary = options.rosterd ?? sibling
        guard access(rosterdBinary, X_OK) == 0 else { throw BenchError("no rosterd at \(rosterdBinary); pass --rosterd") }
        let cpus = Int(roster_allowed_cpu_count())
        if !options.pin {
            serverCPU = nil
            pinning = "not pinned (--no-pin)"
        } else if cpus >= 2 {
            serverCPU = 0
            _ = roster_pin_to_cpu(0, 1)
            pinning = "server on CPU 0, client on CPU 1"
        } else {
            serverCPU = nil
            pinning = "one CPU: server and client share it"
        }
        _ = UnixSocket.raiseDescriptorLimit()
        // Room for 10,000 idle connections and a 200-log-in storm from one uid (the per-uid limit on failed
        // log-ins counts attempts in flight, so its burst is raised, and so are the per-user queue budgets, which
        // count a peer uid's log-ins; all of these log-ins succeed), and for the loop stall's 64 KiB of CSV in one
        // line (escaped, its line breaks take twice the bytes).
        try writeText(configPath, """
            [Server]
            MaxLineBytes=131072
            MaxConnections=20000
            MaxConnectionsPerUser=20000
            MaxQueuedJobsPerUser=1024
            MaxQueuedJobsPerConnection=1024
            [Login]
            RateLimitBurst=100
            [Hashing]
            QueueLimit=1024

            """)
    }

    var configPath: String { workDir + "/rosterd.conf" }

    func finish() {
        guard !options.keepWorkDir, options.workDir == nil else { return }
        _ = try? runToCompletion(["/bin/rm", "-rf", workDir])
    }

    /// The hash every seeded account shares, computed once.
    func passwordHash() throws -> String {
        if let cachedHash { return cachedHash }
        let hash = try Seeder.passwordHash()
        cachedHash = hash
        return hash
    }

    func startFloor() throws(BenchError) -> ServerProcess {
        try ServerProcess.floor(socketPath: socketPath, cpu: serverCPU, workDir: workDir)
    }

    func startRosterd(database: String) throws(BenchError) -> ServerProcess {
        try ServerProcess.rosterd(binary: rosterdBinary, socketPath: socketPath, databasePath: database,
                                  configPath: configPath, cpu: serverCPU, workDir: workDir)
    }

    /// Runs `body` once per run against each server, floor first, so noise hits both alike.
    func alternate<T>(database: String, _ body: (ServerProcess) throws -> T) throws -> (floor: [T], rosterd: [T]) {
        var floor: [T] = []
        var rosterd: [T] = []
        for _ in 0..<options.runs {
            let echo = try startFloor()
            defer { echo.stop() }
            floor.append(try body(echo))
            echo.stop()
            let daemon = try startRosterd(database: database)
            defer { daemon.stop() }
            rosterd.append(try body(daemon))
        }
        return (floor, rosterd)
    }

    /// Adds a figure comparing rosterd with the floor; `lowerIsBetter` decides which way the ratio reads.
    func record(_ scenario: String, _ metric: String, unit: String, rosterd: [Double], floor: [Double]?,
                target: String? = nil, met: ((Spread, Spread?) -> Bool)? = nil) {
        let mine = Spread(rosterd)
        let theirs = floor.map(Spread.init)
        let ratio = theirs.flatMap { $0.median > 0 ? mine.median / $0.median : nil }
        figures.append(Figure(scenario: scenario, metric: metric, unit: unit, rosterd: mine, floor: theirs, ratio: ratio,
                              ratioOf: nil, target: target, met: met.map { $0(mine, theirs) }))
    }

    func run() throws {
        for scenario in options.scenarios {
            switch scenario {
            case .pingpong: try pingPong()
            case .pipelined: try pipelined()
            case .typing: try typing()
            case .idle: try idleMemory()
            case .users: try usersAtScale()
            case .contacts: try contactsAtScale()
            case .storm: try loginStorm()
            case .parse: try parse()
            case .cpuHogs: try cpuHogs()
            case .backPressure: try backPressure()
            case .loopStall: try loopStall()
            }
        }
    }

    var report: Report {
        Report(machine: Machine.describe(pinned: pinning), runs: options.runs, figures: figures, notes: notes)
    }
}
