import Testing
@testable import roster_bench

@Suite("roster-bench backends")
struct BackendOptionsTests {
    @Test func sqliteIsTheDefaultAndRunsEveryScenarioButTheTwoDaemonOne() throws {
        let options = try BenchOptions.parse([])
        #expect(options.backend == .sqlite)
        #expect(options.postgresql == nil)
        #expect(options.scenarios.contains(.contacts))
        #expect(options.scenarios.contains(.registrations))
        #expect(!options.scenarios.contains(.crossDaemon))
    }

    @Test func postgresqlRunsTheStandardScenariosAndCrossDaemonButNoContactSeeds() throws {
        let options = try BenchOptions.parse(["--backend", "postgresql"])
        #expect(options.backend == .postgresql)
        for scenario in [BenchOptions.Scenario.pingpong, .pipelined, .typing, .users, .registrations, .crossDaemon] {
            #expect(options.scenarios.contains(scenario), "\(scenario)")
        }
        for scenario in [BenchOptions.Scenario.contacts, .backPressure, .loopStall] {
            #expect(!options.scenarios.contains(scenario), "\(scenario)")
        }
    }

    @Test func aServerGivenImpliesPostgresqlAndRefusesSqlite() throws {
        let given = try BenchOptions.parse(["--postgresql", " host=/run/postgresql user=bench "])
        #expect(given.backend == .postgresql)
        #expect(given.postgresql == "host=/run/postgresql user=bench")
        #expect(throws: BenchError.self) { try BenchOptions.parse(["--backend", "sqlite", "--postgresql", "host=/tmp"]) }
        #expect(throws: BenchError.self) { try BenchOptions.parse(["--postgresql", "postgresql://bench@localhost/roster"]) }
        #expect(throws: BenchError.self) { try BenchOptions.parse(["--postgresql", "roster"]) }
        #expect(throws: BenchError.self) { try BenchOptions.parse(["--backend", "mysql"]) }
    }

    /// `--only` is checked against the backend wherever `--backend` stands on the line.
    @Test func onlyRefusesAScenarioTheBackendCannotRun() throws {
        #expect(throws: BenchError.self) { try BenchOptions.parse(["--only", "cross-daemon"]) }
        #expect(throws: BenchError.self) { try BenchOptions.parse(["--only", "pingpong,contacts", "--backend", "postgresql"]) }
        let chosen = try BenchOptions.parse(["--only", "cross-daemon,registrations", "--backend", "postgresql", "--names", "40"])
        #expect(chosen.scenarios == [.crossDaemon, .registrations])
        #expect(chosen.crossDaemonNames == 40)
        #expect(try BenchOptions.parse(["--only", "registrations"]).scenarios == [.registrations])
    }

    @Test func conninfoValuesAreOneValueWhateverTheyHold() {
        #expect(BenchConninfo.quoted("/tmp/roster-bench-pg-a1B2c3/sock") == "/tmp/roster-bench-pg-a1B2c3/sock")
        #expect(BenchConninfo.quoted("roster_bench_users") == "roster_bench_users")
        #expect(BenchConninfo.quoted("") == "''")
        #expect(BenchConninfo.quoted("my dir") == "'my dir'")
        #expect(BenchConninfo.quoted(#"it's a\b"#) == #"'it\'s a\\b'"#)
        #expect(BenchConninfo.quoted("a=b") == "'a=b'")
        // libpq takes the last of a repeated key, so the database named last is the one used.
        #expect(BenchConninfo.replacingDatabase(" host=/run/postgresql dbname=roster ", with: "roster_bench_small")
                == "host=/run/postgresql dbname=roster dbname=roster_bench_small")
        #expect(BenchConninfo.replacingDatabase("", with: "roster_bench_small") == "dbname=roster_bench_small")
    }

    @Test func theDaemonIsToldItsBackendByConfigOrArgument() {
        let postgres = BenchDatabase.postgresql(conninfo: "host=/tmp/pg/sock user=postgres dbname=roster_bench_small")
        let text = RosterdConfig.text(for: postgres)
        #expect(text.hasPrefix(RosterdConfig.limits))
        #expect(text.hasSuffix("[Storage]\nBackend=postgresql\n[PostgreSQL]\nConnection=host=/tmp/pg/sock user=postgres dbname=roster_bench_small\n"))
        #expect(RosterdConfig.arguments(for: postgres).isEmpty)
        let file = BenchDatabase.sqlite(path: "/tmp/w/small.db")
        #expect(RosterdConfig.text(for: file) == RosterdConfig.limits)
        #expect(!RosterdConfig.text(for: file).contains("[Storage]"))
        #expect(RosterdConfig.arguments(for: file) == ["--database", "/tmp/w/small.db"])
    }

    @Test func copyRowsEscapeWhatCopyTextFormatReserves() {
        #expect(CopyText.row(["user0000001", "user0000001", nil, "5"]) == "user0000001\tuser0000001\t\\N\t5\n")
        #expect(CopyText.row(["a\tb", "c\nd", "e\\f", "g\rh", "\\N"]) == "a\\tb\tc\\nd\te\\\\f\tg\\rh\t\\\\N\n")
        #expect(CopyText.row(["x\r\ny"]) == "x\\r\\ny\n")
        #expect(CopyText.row(["张三", ""]) == "张三\t\n")
    }

    @Test func theHashBoundIsEveryCoreHashingAndTheTargetNineTenthsOfIt() {
        let bound = HashBound(cores: 2, secondsPerHash: 0.05)
        #expect(bound.registrationsPerSecond == 40)
        #expect(bound.isMet(by: 36))
        #expect(!bound.isMet(by: 35.9))
        #expect(HashBound(cores: 2, secondsPerHash: 0).registrationsPerSecond == 0)
    }

    @Test func negativeFiguresKeepTheirPrecision() {
        let report = Report(machine: Machine(cpu: "x", cores: 2, kernel: "k", pinned: "p"), runs: 1, figures: [], notes: [])
        #expect(report.format(-1_234.4) == "-1234")
        #expect(report.format(-42.26) == "-42.3")
        #expect(report.format(-0.5) == "-0.50")
        #expect(report.format(250_000) == "250000")
        #expect(report.format(3.14159) == "3.14")
    }
}
