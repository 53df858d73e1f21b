import RosterCore
import RosterPostgres
import RosterPostgresTesting
import RosterRuntime
import RosterStorage
import Testing

/// The loop-driven pool against a real server.
@Suite("PostgreSQL pool")
struct PGPoolTests {
    let harness: LoopHarness
    let conninfo: String

    init() throws {
        harness = try LoopHarness()
        conninfo = try PostgresTestCluster.shared.createDatabase()
        try PGBlockingConnection(conninfo: conninfo).execute("CREATE TABLE t(id bigint PRIMARY KEY, name text UNIQUE, data bytea)")
    }

    func pool(_ configure: (inout PGPoolSettings) -> Void = { _ in }) throws -> PGPool {
        var settings = PGPoolSettings(conninfo: conninfo, connections: 2)
        configure(&settings)
        let pool = PGPool(settings: settings, loop: harness.loop, logger: Logger(level: .err))
        pool.start()
        try harness.run(until: { pool.phase == .up })
        return pool
    }

    func execute(_ pool: PGPool, _ statements: [PGStatement], transaction: Bool = false,
                 sourceLocation: SourceLocation = #_sourceLocation) throws -> Result<[PGResult], PGFailure> {
        try harness.answer(sourceLocation: sourceLocation) {
            pool.execute(statements, transaction: transaction, charge: charge(1), completion: $0)
        }
    }

    @Test func executesStatementsInOrder() throws {
        let pool = try pool()
        defer { pool.stop() }
        let blob: [UInt8] = Array(0...255)
        let results = try execute(pool, [
            PGStatement("INSERT INTO t VALUES ($1, $2, $3)", [.int(1), .text("ann"), .bytes(blob)]),
            PGStatement("SELECT id, name, data FROM t WHERE id = $1", [.int(1)]),
        ]).get()
        #expect(results.count == 2)
        #expect(results[0].affectedRows == 1)
        #expect(results[1].rows.first?.text(1) == "ann")
        #expect(results[1].rows.first?.bytes(2) == blob)
    }
}
