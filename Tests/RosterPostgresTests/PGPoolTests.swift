import RosterCore
import RosterPostgres
import RosterPostgresTesting
import RosterRuntime
import RosterStorage
import Glibc
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

    /// An answer that says done means committed, even on a server whose default says otherwise.
    @Test func everyConnectionCommitsSynchronouslyWhateverTheServersDefault() throws {
        let database = try #require(conninfo.split(separator: "=").last.map(String.init))
        try PostgresTestCluster.shared.psql("ALTER DATABASE \(database) SET synchronous_commit = off")
        #expect(try PGBlockingConnection(conninfo: conninfo).execute("SHOW synchronous_commit").rows.first?.text(0) == "off")
        let pool = try pool()
        defer { pool.stop() }
        for _ in 0..<2 {
            let shown = try execute(pool, [PGStatement("SHOW synchronous_commit")]).get().first?.rows.first?.text(0)
            #expect(shown == "on")
        }
    }

    func count(_ pool: PGPool, sourceLocation: SourceLocation = #_sourceLocation) throws -> Int64? {
        try execute(pool, [PGStatement("SELECT count(*) FROM t")], sourceLocation: sourceLocation).get().first?.rows.first?.int(0)
    }

    @Test func aTransactionRollsBackOnItsFirstFailureAndStatementsAloneDoNot() throws {
        let pool = try pool()
        defer { pool.stop() }
        let insert = { (id: Int64) in PGStatement("INSERT INTO t(id, name) VALUES ($1, $2)", [.int(id), .text("n\(id)")]) }
        let together = try execute(pool, [insert(1), insert(2), insert(1), insert(3)], transaction: true)
        guard case .failure(.server(let sqlState, _)) = together else { Issue.record("not refused: \(together)"); return }
        #expect(sqlState == "23505")
        #expect(try count(pool) == 0, "a failed transaction left rows behind")
        let alone = try execute(pool, [insert(1), insert(1), insert(2)], transaction: false)
        guard case .failure(.server("23505", _)) = alone else { Issue.record("not refused: \(alone)"); return }
        #expect(try count(pool) == 2, "statements alone stand alone")
        // The connection that saw the failures serves on.
        #expect(try execute(pool, [insert(9)], transaction: true).get().first?.affectedRows == 1)
    }

    @Test func aStatementPastStatementTimeoutIsCancelledAndTheConnectionServesOn() throws {
        let pool = try pool { $0.statementTimeoutMs = 100; $0.connections = 1 }
        defer { pool.stop() }
        let slow = try execute(pool, [PGStatement("SELECT pg_sleep(5)")])
        #expect(throws: PGFailure.timeout) { try slow.get() }
        #expect(try execute(pool, [PGStatement("SELECT 42")]).get().first?.rows.first?.int(0) == 42)
    }

    @Test func aServerThatStopsAnsweringTimesOutAndItsConnectionIsReplaced() throws {
        let pool = try pool { $0.statementTimeoutMs = 100; $0.connections = 1; $0.reconnectMinMs = 10 }
        defer { pool.stop() }
        let backend = try #require(try execute(pool, [PGStatement("SELECT pg_backend_pid()")]).get().first?.rows.first?.int(0))
        // A backend frozen mid-conversation: no error, no close, no answer, as a host that vanished from the network.
        kill(pid_t(backend), SIGSTOP)
        // Woken, it finds its client gone and ends by itself (a SIGKILL would make the server restart every backend).
        defer { kill(pid_t(backend), SIGCONT) }
        let hung = try execute(pool, [PGStatement("SELECT 1")])
        #expect(throws: PGFailure.timeout) { try hung.get() }
        try harness.run(until: { pool.phase == .up && pool.stats.workers == 1 })
        let fresh = try execute(pool, [PGStatement("SELECT pg_backend_pid()")]).get().first?.rows.first?.int(0)
        #expect(fresh != nil && fresh != backend)
    }

    /// Every backend of the pool frozen: the first request to miss its deadline marks the pool down there and then,
    /// so that the next is refused at once instead of waiting out a deadline of its own on the other connection.
    @Test func aMissedDeadlineMarksThePoolDownAtOnceAndItComesBackByItself() throws {
        let pool = try pool { $0.statementTimeoutMs = 100; $0.connections = 2; $0.reconnectMinMs = 50 }
        defer { pool.stop() }
        try harness.run(until: { pool.stats.workers == 2 })
        let backends = try PGBlockingConnection(conninfo: conninfo).execute("""
            SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
            """).rows.compactMap { $0.int(0) }.map { pid_t($0) }
        #expect(backends.count == 2)
        for pid in backends { kill(pid, SIGSTOP) }
        defer { for pid in backends { kill(pid, SIGCONT) } }
        let hung = try execute(pool, [PGStatement("SELECT 1")])
        #expect(throws: PGFailure.timeout) { try hung.get() }
        #expect(pool.phase == .down, "down at the first missed deadline, not after each connection's own")
        var refused: Result<[PGResult], PGFailure>?
        pool.execute([PGStatement("SELECT 2")], transaction: false, charge: charge(1)) { refused = $0 }
        guard case .failure(.unavailable)? = refused else {
            Issue.record("not refused at once while down: \(String(describing: refused))")
            return
        }
        for pid in backends { kill(pid, SIGCONT) }
        try harness.run(until: { pool.phase == .up })
        #expect(try execute(pool, [PGStatement("SELECT 42")]).get().first?.rows.first?.int(0) == 42)
    }

    @Test func pipelinedRequestsFromManyCallersCompleteInOrderPerCaller() throws {
        let pool = try pool { $0.connections = 3 }
        defer { pool.stop() }
        _ = try execute(pool, [PGStatement("CREATE SEQUENCE s")])
        let callers = 12, perCaller = 30
        var answered: [Int: [Int]] = [:]
        var serverOrder: [Int: [Int64]] = [:]
        var failures = 0
        for round in 0..<perCaller {
            for caller in 0..<callers {
                pool.execute([PGStatement("SELECT nextval('s')")], transaction: false,
                             charge: charge(UInt64(caller), payer: Int64(caller % 3))) { result in
                    answered[caller, default: []].append(round)
                    guard let value = try? result.get().first?.rows.first?.int(0) else { failures += 1; return }
                    serverOrder[caller, default: []].append(value)
                }
            }
        }
        try harness.run(until: { answered.values.reduce(0) { $0 + $1.count } == callers * perCaller })
        #expect(failures == 0)
        for caller in 0..<callers {
            #expect(answered[caller] == Array(0..<perCaller), "caller \(caller) answered out of order")
            let order = serverOrder[caller] ?? []
            #expect(order == order.sorted(), "caller \(caller) ran out of order on the server")
        }
        #expect(pool.stats.waiting == 0 && pool.stats.running == 0)
    }

    @Test func oneCallersBurstWaitsInTheFairQueueNotBehindOneConnection() throws {
        let pool = try pool { $0.connections = 2; $0.pipelineDepth = 4 }
        defer { pool.stop() }
        try harness.run(until: { pool.stats.workers == 2 })
        var order: [Int] = []
        for index in 0..<200 {
            pool.execute([PGStatement("SELECT 1")], transaction: false, charge: charge(1)) { _ in order.append(index) }
        }
        // Four in flight on its connection and a pipeline's worth per connection parked: the rest waits its turn.
        #expect(pool.stats.waiting == 200 - 4 - 8)
        var other: Result<[PGResult], PGFailure>?
        pool.execute([PGStatement("SELECT 2")], transaction: false, charge: charge(2, payer: 2)) { other = $0 }
        try harness.run(until: { other != nil })
        #expect(order.count < 200, "another payer waited for the whole burst")
        try harness.run(until: { order.count == 200 })
        #expect(order == Array(0..<200))
    }

    @Test func pastTheBudgetRequestsAreBusyUnlessForced() throws {
        let pool = try pool { $0.connections = 1; $0.queueLimit = 2; $0.pipelineDepth = 1 }
        defer { pool.stop() }
        var results: [Int: Result<[PGResult], PGFailure>] = [:]
        let sleep = [PGStatement("SELECT pg_sleep(0.05)")]
        for index in 0..<2 {
            pool.execute(sleep, transaction: false, charge: charge(UInt64(index), payer: Int64(index))) { results[index] = $0 }
        }
        var refusedAtOnce = false
        pool.execute(sleep, transaction: false, charge: charge(7, payer: 7)) { results[2] = $0; refusedAtOnce = true }
        #expect(refusedAtOnce, "a refusal waited")
        guard case .failure(.busy(let retry))? = results[2] else { Issue.record("not busy: \(String(describing: results[2]))"); return }
        #expect(retry > 0)
        pool.execute(sleep, transaction: false, charge: charge(8, payer: 8), force: true) { results[3] = $0 }
        #expect(pool.stats.refused == 1)
        try harness.run(until: { results.count == 4 })
        for index in [0, 1, 3] { #expect((try? results[index]?.get()) != nil, "request \(index) failed") }
    }

    /// A reload's `MaxQueuedJobs=` reaches the pool: a request the old limit refused is taken under a larger one,
    /// and a smaller one refuses again, without touching what already waits.
    @Test func aNewQueueLimitRulesFromThenOn() throws {
        let pool = try pool { $0.connections = 1; $0.queueLimit = 2; $0.pipelineDepth = 1 }
        defer { pool.stop() }
        var results: [Int: Result<[PGResult], PGFailure>] = [:]
        let sleep = [PGStatement("SELECT pg_sleep(0.05)")]
        func send(_ index: Int) {
            pool.execute(sleep, transaction: false, charge: charge(UInt64(index), payer: Int64(index))) { results[index] = $0 }
        }
        for index in 0..<3 { send(index) }
        guard case .failure(.busy)? = results[2] else { Issue.record("not refused at 2: \(String(describing: results[2]))"); return }
        pool.apply(queueLimit: 4)
        #expect(pool.stats.limit == 4)
        for index in 3..<5 { send(index) }
        #expect(results[3] == nil && results[4] == nil, "refused under the new limit: \(results)")
        pool.apply(queueLimit: 1)
        send(5)
        guard case .failure(.busy)? = results[5] else { Issue.record("not refused at 1: \(String(describing: results[5]))"); return }
        try harness.run(until: { results.count == 6 })
        for index in [0, 1, 3, 4] { #expect((try? results[index]?.get()) != nil, "request \(index) failed") }
    }

    @Test func aLeaseHoldsOneConnectionAndWhatItLeavesOpenIsRolledBack() throws {
        let pool = try pool { $0.connections = 1 }
        defer { pool.stop() }
        let lease = try harness.answer { pool.lease(charge: charge(1), completion: $0) }.get()
        _ = try harness.answer { lease.execute([PGStatement("BEGIN"), PGStatement("INSERT INTO t(id) VALUES (1)")], completion: $0) }.get()
        let inside = try harness.answer { lease.execute([PGStatement("SELECT count(*) FROM t")], completion: $0) }.get()
        #expect(inside.first?.rows.first?.int(0) == 1)
        // The one connection is held: a request waits until the lease is given back.
        var waited: Result<[PGResult], PGFailure>?
        pool.execute([PGStatement("SELECT count(*) FROM t")], transaction: false, charge: charge(2)) { waited = $0 }
        for _ in 0..<5 { try harness.loop.runOnce(timeoutMs: 10) }
        #expect(waited == nil, "ran on a leased connection")
        lease.release()
        lease.release()
        try harness.run(until: { waited != nil })
        #expect(try waited?.get().first?.rows.first?.int(0) == 0, "an open transaction survived its lease")
        let late = try harness.answer { lease.execute([PGStatement("SELECT 1")], completion: $0) }
        guard case .failure(.unavailable) = late else { Issue.record("a released lease still ran: \(late)"); return }
    }
}
