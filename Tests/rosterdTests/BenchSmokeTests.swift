import Foundation
import RosterPostgresTesting
import Testing

/// `roster-bench --quick` runs every scenario end to end against the real daemon and its floor. It asserts
/// nothing about speed (speed goals live in the benchmark, docs/BENCHMARKS.md), only that the table comes out.
@Suite("roster-bench smoke test")
struct BenchSmokeTests {
    @Test func quickRunPrintsTheTable() throws {
        let directory = try TemporaryDirectory()
        let result = try capture([builtBinary("roster-bench"), "--quick", "--rosterd", TestDaemon.binary,
                                  "--work-dir", directory.path + "/bench"],
                                 in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("| scenario"))
        for scenario in ["ping-pong", "pipelined", "typing", "idle", "users", "contacts", "log-in storm", "parse csv",
                         "parse vcard", "cpu-hogs", "back-pressure", "loop stall", "registrations, one daemon"] {
            #expect(result.stdout.contains(scenario), "no \(scenario) row")
        }
    }

    /// The same on PostgreSQL, on the tests' shared cluster through `--postgresql`, with the
    /// scenarios that take two daemons on one database.
    @Test func quickRunOnPostgresqlPrintsTheTable() throws {
        let directory = try TemporaryDirectory()
        let server = try PostgresTestCluster.shared.conninfo()
        let result = try capture([builtBinary("roster-bench"), "--quick", "--rosterd", TestDaemon.binary, "--postgresql", server,
                                  "--only", "pingpong,typing,users,registrations,cross-daemon",
                                  "--work-dir", directory.path + "/bench"],
                                 in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        for row in ["ping-pong", "typing", "2000 users", "registrations, one daemon", "cross-daemon", "storage: PostgreSQL"] {
            #expect(result.stdout.contains(row), "no \(row) row")
        }
        // What the benchmark made on a server that is not its own, it drops.
        let left = try PostgresTestCluster.shared.psql("SELECT count(*) FROM pg_database WHERE datname LIKE 'roster_bench_%'")
        #expect(left.trimmingCharacters(in: .whitespacesAndNewlines) == "0")
    }
}
