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
    /// The benchmark's own core when it pins (the servers take CPU 0).
    static let clientCPU: Int32 = 1
    var figures: [Figure] = []
    var notes: [String] = []
    private var cachedHash: String?
    /// SQLite files or PostgreSQL databases, as `--backend` says.
    let storage: BenchStorage
    /// The CPUs this process could use before it pinned itself: the host's, for the hash-bound rate.
    let hostCores: Int
    var cachedBound: HashBound?

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
        hostCores = max(1, cpus)
        // Before the client pins itself: a throwaway PostgreSQL server may use every CPU, as on a host of its own.
        storage = try BenchStorage(options: options, workDir: workDir)
        if !options.pin {
            serverCPU = nil
            pinning = "not pinned (--no-pin)"
        } else if cpus >= 2 {
            serverCPU = 0
            _ = roster_pin_to_cpu(0, Self.clientCPU)
            pinning = "server on CPU 0, client on CPU 1"
        } else {
            serverCPU = nil
            pinning = "one CPU: server and client share it"
        }
        _ = UnixSocket.raiseDescriptorLimit()
        notes.append(storage.description)
    }

    /// Where the daemon's configuration is written before each start (`RosterdConfig`).
    var configPath: String { workDir + "/rosterd.conf" }

    func finish() {
        storage.finish(keep: options.keepWorkDir)
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

    /// rosterd on `database`, on the suite's socket unless another is given (a second daemon's). `pinned: false`
    /// leaves it wherever the kernel puts it, for the scenarios whose bound is every core of the host.
    func startRosterd(database: BenchDatabase, socketPath: String? = nil, name: String = "rosterd",
                      pinned: Bool = true) throws(BenchError) -> ServerProcess {
        try writeText(configPath, RosterdConfig.text(for: database))
        // A child inherits the client's pin, and rosterd sizes its worker pools by the CPUs it may use at start.
        let widen = !pinned && serverCPU != nil
        if widen { _ = roster_allow_every_cpu(0) }
        defer { if widen { _ = roster_pin_to_cpu(0, Self.clientCPU) } }
        return try ServerProcess.rosterd(binary: rosterdBinary, socketPath: socketPath ?? self.socketPath,
                                         databaseArguments: RosterdConfig.arguments(for: database), configPath: configPath,
                                         cpu: pinned ? serverCPU : nil, workDir: workDir, name: name)
    }

    func startRosterd(database path: String) throws(BenchError) -> ServerProcess {
        try startRosterd(database: .sqlite(path: path))
    }

    /// Runs `body` once per run against each server, floor first, so noise hits both alike.
    func alternate<T>(database path: String, _ body: (ServerProcess) throws -> T) throws -> (floor: [T], rosterd: [T]) {
        try alternate(database: .sqlite(path: path), body)
    }

    func alternate<T>(database: BenchDatabase, _ body: (ServerProcess) throws -> T) throws -> (floor: [T], rosterd: [T]) {
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
            case .registrations: try registrations()
            case .crossDaemon: try crossDaemon()
            case .davSync: try davSync()
            }
        }
    }

    var report: Report {
        Report(machine: Machine.describe(pinned: pinning), runs: options.runs, figures: figures, notes: notes)
    }
}
