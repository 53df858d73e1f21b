import Testing

/// `roster-bench --quick` runs every scenario end to end against the real daemon and its floor. It asserts
/// nothing about speed (speed goals live in the benchmark, issue 8), only that the table comes out.
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
}
