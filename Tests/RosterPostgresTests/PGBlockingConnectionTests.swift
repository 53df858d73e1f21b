import RosterPostgres
import RosterPostgresTesting
import Testing

/// The blocking connection migrations and --copy-database use.
@Suite("PostgreSQL blocking connection")
struct PGBlockingConnectionTests {
    @Test func parametersAndResultsRoundTrip() throws {
        let connection = try PGBlockingConnection(conninfo: try PostgresTestCluster.shared.createDatabase())
        defer { connection.close() }
        try connection.execute("CREATE TABLE t(id bigint PRIMARY KEY, name text, flag boolean, data bytea)")
        let blob: [UInt8] = [0, 1, 0x7f, 0x80, 0xff, 10, 13, 0x5c, 0x27]
        let inserted = try connection.execute("INSERT INTO t VALUES ($1, $2, $3, $4), (2, NULL, NULL, NULL)",
                                              [.int(1), .text("O'Brien \\ 张三"), .bool(true), .bytes(blob)])
        #expect(inserted.affectedRows == 2)
        let result = try connection.execute("SELECT id, name, flag, data FROM t ORDER BY id")
        #expect(result.rows.count == 2)
        #expect(result.rows[0].int(0) == 1)
        #expect(result.rows[0].text(1) == "O'Brien \\ 张三")
        #expect(result.rows[0].bool(2) == true)
        #expect(result.rows[0].bytes(3) == blob)
        #expect(result.rows[1].isNull(1) && result.rows[1].isNull(2) && result.rows[1].isNull(3))
        #expect(result.rows[1].bytes(3) == nil && result.rows[1].text(1) == nil)
        #expect(try connection.execute("SELECT $1::bytea", [.bytes([])]).rows[0].bytes(0) == [])
        #expect(try connection.execute("SELECT $1::bigint IS NULL", [.null]).rows[0].bool(0) == true)
    }

    @Test func serverErrorsAreTyped() throws {
        let connection = try PGBlockingConnection(conninfo: try PostgresTestCluster.shared.createDatabase())
        try connection.execute("CREATE TABLE u(name text UNIQUE)")
        try connection.execute("INSERT INTO u VALUES ('a')")
        #expect(throws: PGFailure.self) { try connection.execute("INSERT INTO u VALUES ('a')") }
        do {
            try connection.execute("INSERT INTO u VALUES ('a')")
        } catch {
            guard case .server(let sqlState, _) = error else { Issue.record("not a server error: \(error)"); return }
            #expect(sqlState == "23505")
        }
        do {
            try connection.execute("SET statement_timeout = 50")
            try connection.execute("SELECT pg_sleep(2)")
            Issue.record("pg_sleep outlived statement_timeout")
        } catch {
            #expect(error == .timeout)
        }
    }

    @Test func aServerThatIsNotThereIsRefused() {
        #expect(throws: PGFailure.self) { try PGBlockingConnection(conninfo: "host=/nonexistent/roster dbname=x connect_timeout=1") }
    }
}
