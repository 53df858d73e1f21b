/// roster-bench's command line.
struct BenchOptions {
    enum Scenario: String, CaseIterable {
        case pingpong, pipelined, typing, idle, users, contacts, storm, parse
        case cpuHogs = "cpu-hogs"
        case backPressure = "back-pressure"
        case loopStall = "loop-stall"
        case registrations
        case crossDaemon = "cross-daemon"
        case davSync = "dav-sync"

        /// The backends a scenario runs on: the contacts scenarios seed their books through RosterSQLite (SQLite
        /// only), and two daemons share one database only on PostgreSQL.
        var backends: Set<BenchBackend> {
            switch self {
            case .contacts, .backPressure, .loopStall: [.sqlite]
            case .crossDaemon: [.postgresql]
            case .pingpong, .pipelined, .typing, .idle, .users, .storm, .parse, .cpuHogs, .registrations, .davSync:
                [.sqlite, .postgresql]
            }
        }
    }

    var json = false
    var quick = false
    var runs = 3
    var scenarios = Scenario.allCases
    var rosterd: String?
    var workDir: String?
    var keepWorkDir = false
    /// Pin the server to one CPU and the client to another (with two or more); `--no-pin` lets the kernel place
    /// them, so the daemon's workers can run beside its loop instead of taking turns with it.
    var pin = true
    var users = 1_000_000
    var contacts = 100_000
    var sessions = 1_000
    var idleConnections = 10_000
    var stormLogins = 200
    var roundTrips = 20_000
    var searchesPerQueryClass = 500
    var pipelinedConnections = 100
    var pipelinedDepth = 32
    var pipelinedSeconds = 2.0
    var typingSeconds = 3.0
    var keystrokeIntervalMs = 100.0
    var hogAdds = 200
    var hogRegistrations = 20
    var importsOfOneRow = 100
    var backPressurePeers = 150
    var backPressureRequests = 200
    var backPressureForms = 300
    var backPressureContacts = 15_000
    var backPressureSeconds = 5.0
    /// Bytes of CSV in the loop stall's import (64 KiB, the size whose import once stalled the loop).
    var stallImportBytes = 65_536
    /// `--backend`: where the daemons under test keep their data.
    var backend = BenchBackend.sqlite
    /// `--postgresql CONNINFO`: an existing server to make the benchmark's databases on, instead of a throwaway
    /// cluster of its own.
    var postgresql: String?
    /// Names registered on one daemon while another's register form holds each (cross-daemon).
    var crossDaemonNames = 300
    /// How long registrations are sent back to back, after a quarter of that as warm-up (registrations,
    /// cross-daemon).
    var registrationSeconds = 5.0
    /// Cards in the book both CardDAV servers hold (dav-sync).
    var davCards = 10_000
    /// One-card changes a phone-like client syncs per run (dav-sync).
    var davChanges = 20
    /// Set by the parent process: serve the C floor on this path instead of benchmarking.
    var serveFloor: String?
    /// Set by the parent process: busy-loop for ever (a CPU hog of the cpu-hogs scenario).
    var spin = false
    /// `--parse-once FORMAT BYTES`: parse the parse scenario's input once and exit (for callgrind).
    var parseOnce: (format: ParseInput.Format, bytes: Int)?

    static let usage = """
        roster-bench [OPTIONS...]

        Measures rosterd against a C epoll echo server (the floor) on the same socket path, with the same
        client and the same requests, and prints min / median / max over repeated runs.

          --json                 Print the report as JSON instead of a table
          --quick                A few hundred operations per scenario (a smoke test, not a measurement)
          --runs N               Repeat each scenario N times (default 3)
          --only LIST            Comma-separated: pingpong,pipelined,typing,idle,users,contacts,storm,parse,
                                 cpu-hogs,back-pressure,loop-stall,registrations,cross-daemon,dav-sync (default: every
                                 one the backend runs: contacts, back-pressure and loop-stall need sqlite,
                                 cross-daemon needs postgresql)
          --backend NAME         sqlite (default: a file per database) or postgresql (a throwaway cluster in a
                                 temporary directory, run as the postgres user when root; see --postgresql)
          --postgresql CONNINFO  An existing PostgreSQL server (libpq key=value conninfo) instead of a
                                 throwaway cluster; implies --backend postgresql. Its user needs CREATEDB: the
                                 benchmark drops and makes databases named roster_bench_*
          --names N              Registrations watched from the other daemon's form, cross-daemon (default 300)
          --rosterd PATH         The daemon to measure (default: rosterd next to this binary)
          --work-dir DIR         Put sockets and databases here (default: a fresh /tmp/roster-bench-*)
          --keep                 Keep the work directory (seeded databases) afterwards
          --no-pin               Leave the server and the client where the kernel puts them (default: the
                                 server on CPU 0, its workers too, and the client on CPU 1)
          --users N              Accounts for the scale scenario (default 1000000)
          --contacts N           Contacts for the scale and loop-stall scenarios (default 100000)
          --sessions N           Typing sessions (default 1000)
          --idle-connections N   Connections for the idle-memory scenario (default 10000)
          --storm-logins N       Concurrent log-ins in the storm (default 200)
          --parse-once FORMAT BYTES  Parse the parse scenario's input (csv or vcard, of BYTES) once and exit
          --peers N              Peers that do not read, in the back-pressure scenario (default 150)
          --forms N              Contacts forms that do not read, in the back-pressure scenario (default 300)
          --cards N              Cards in the CardDAV book of the dav-sync scenario (default 10000)
          --changes N            One-card changes synced per run by the phone-like client, dav-sync (default 20)
        """

    static func parse(_ arguments: [String]) throws(BenchError) -> BenchOptions {
        var options = BenchOptions()
        var rest = arguments[...]
        var backendGiven: BenchBackend?
        var onlyGiven = false
        func value(_ name: String) throws(BenchError) -> String {
            guard let next = rest.popFirst() else { throw BenchError("\(name) needs a value") }
            return next
        }
        func number(_ name: String) throws(BenchError) -> Int {
            let text = try value(name)
            guard let parsed = Int(text), parsed >= 0 else { throw BenchError("\(name): not a count: \(text)") }
            return parsed
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--json": options.json = true
            case "--quick": options.quick = true
            case "--keep": options.keepWorkDir = true
            case "--no-pin": options.pin = false
            case "--runs": options.runs = max(1, try number(argument))
            case "--rosterd": options.rosterd = try value(argument)
            case "--work-dir": options.workDir = try value(argument)
            case "--users": options.users = try number(argument)
            case "--contacts": options.contacts = try number(argument)
            case "--sessions": options.sessions = max(1, try number(argument))
            case "--idle-connections": options.idleConnections = max(1, try number(argument))
            case "--storm-logins": options.stormLogins = max(1, try number(argument))
            case "--peers": options.backPressurePeers = max(1, try number(argument))
            case "--forms": options.backPressureForms = max(1, try number(argument))
            case "--names": options.crossDaemonNames = max(1, try number(argument))
            case "--cards": options.davCards = max(1, try number(argument))
            case "--changes": options.davChanges = max(1, try number(argument))
            case "--backend":
                let name = try value(argument)
                guard let backend = BenchBackend(rawValue: name) else { throw BenchError("unknown backend \(name): sqlite or postgresql") }
                backendGiven = backend
            case "--postgresql": options.postgresql = try BenchConninfo.checked(try value(argument))
            case "--serve-floor": options.serveFloor = try value(argument)
            case "--spin": options.spin = true
            case "--parse-once":
                let name = try value(argument)
                guard let format = ParseInput.Format(rawValue: name) else { throw BenchError("unknown format \(name)") }
                options.parseOnce = (format, try number(argument))
            case "--only":
                var chosen: [Scenario] = []
                for name in try value(argument).split(separator: ",") {
                    guard let scenario = Scenario(rawValue: String(name)) else { throw BenchError("unknown scenario \(name)") }
                    chosen.append(scenario)
                }
                options.scenarios = chosen
                onlyGiven = true
            case "-h", "--help":
                throw BenchError(usage)
            default:
                throw BenchError("unknown option \(argument)\n\n\(usage)")
            }
        }
        if options.postgresql != nil && backendGiven == .sqlite {
            throw BenchError("--postgresql names a PostgreSQL server: it does not go with --backend sqlite")
        }
        options.backend = backendGiven ?? (options.postgresql != nil ? .postgresql : .sqlite)
        if onlyGiven {
            let backend = options.backend
            if let refused = options.scenarios.first(where: { !$0.backends.contains(backend) }) {
                throw BenchError("\(refused.rawValue) does not run on \(backend.rawValue)")
            }
        } else {
            options.scenarios = Scenario.allCases.filter { $0.backends.contains(options.backend) }
        }
        if options.quick { options.shrinkForSmokeTest() }
        return options
    }

    /// A few hundred operations each: proves every scenario runs end to end in seconds, measures nothing.
    private mutating func shrinkForSmokeTest() {
        runs = 1
        users = min(users, 2_000)
        contacts = min(contacts, 300)
        sessions = min(sessions, 20)
        idleConnections = min(idleConnections, 100)
        stormLogins = min(stormLogins, 2)
        roundTrips = 300
        searchesPerQueryClass = 20
        pipelinedConnections = 10
        pipelinedDepth = 8
        pipelinedSeconds = 0.2
        typingSeconds = 0.5
        keystrokeIntervalMs = 20
        hogAdds = 10
        hogRegistrations = 1
        importsOfOneRow = 20
        backPressurePeers = min(backPressurePeers, 10)
        backPressureRequests = min(backPressureRequests, 20)
        backPressureForms = min(backPressureForms, 10)
        backPressureContacts = min(backPressureContacts, 300)
        backPressureSeconds = 0.3
        crossDaemonNames = min(crossDaemonNames, 10)
        registrationSeconds = 0.4
        davCards = min(davCards, 50)
        davChanges = min(davChanges, 3)
    }
}
