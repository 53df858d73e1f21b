import RosterPostgresTesting
import Testing

/// The throwaway server every PostgreSQL test stands on.
@Suite("PostgreSQL test cluster")
struct TestClusterTests {
    @Test func eachDatabaseIsNewAndEmpty() throws {
        let cluster = try PostgresTestCluster.shared
        let first = try cluster.createDatabase()
        let second = try cluster.createDatabase()
        #expect(first != second)
        let name = try #require(first.split(separator: "=").last.map(String.init))
        try cluster.psql("CREATE TABLE t(x int); INSERT INTO t VALUES (41), (1)", database: name)
        #expect(try cluster.psql("SELECT sum(x) FROM t", database: name).trimmingCharacters(in: .whitespacesAndNewlines) == "42")
        let other = try #require(second.split(separator: "=").last.map(String.init))
        #expect(try cluster.psql("SELECT count(*) FROM pg_tables WHERE tablename = 't'", database: other)
            .trimmingCharacters(in: .whitespacesAndNewlines) == "0")
    }
}
