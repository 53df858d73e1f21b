import Glibc
import RosterPostgresTesting
import RosterProtocol
import Testing

/// rosterd on a PostgreSQL that stops answering with its connections still open (every server process under
/// SIGSTOP, as a frozen host or a hung disk): the first request to miss its deadline marks the storage down, every
/// request after it answers `storage_unavailable` at once, `admin.stats` answers from memory saying so, and all of
/// it comes back by itself once the server runs again.
@Suite("rosterd on a frozen PostgreSQL", .serialized)
struct FrozenPostgresTests {
    /// `[PostgreSQL] StatementTimeoutSec=` here: a request's deadline is this plus a margin of 500 ms (as much
    /// again as the timeout, between 500 ms and 2 s).
    static let statementTimeoutMs: Int64 = 400
    static let deadlineMs = statementTimeoutMs + 500

    private static func milliseconds(since start: timespec) -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return (Int64(now.tv_sec) - Int64(start.tv_sec)) * 1_000 + (Int64(now.tv_nsec) - Int64(start.tv_nsec)) / 1_000_000
    }

    private static func now() -> timespec {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return now
    }

    /// The answer to `method` and how long it took, in milliseconds.
    private static func timed(_ client: TestClient, _ method: String, _ params: JSONValue = [:]) throws
        -> (answer: JSONValue, ms: Int64) {
        let started = now()
        let answer = try client.call(method, params)
        return (answer, milliseconds(since: started))
    }

    @Test func theFirstMissedDeadlineMarksItDownAndEverythingAfterAnswersAtOnceUntilItThaws() throws {
        let cluster = try PostgresTestCluster()
        defer { cluster.destroy() }
        let conninfo = try cluster.createDatabase()
        let config = "[Storage]\nBackend=postgresql\n[PostgreSQL]\nConnection=\(conninfo)\nConnections=3\n"
            + "StatementTimeoutSec=\(Self.statementTimeoutMs)ms\n[Hashing]\nMemoryKiB=8192\nIterations=1\n"
        let daemon = try TestDaemon(config: config)
        defer { daemon.stop() }
        let client = try daemon.connect()
        let admin = try daemon.connect()
        try client.register("alice1")
        let token = try client.logIn("alice1")
        for _ in 0..<200 where try admin.call("admin.stats")["result"]?["storage"]?["state"] != "up" { usleep(20_000) }

        let frozen = cluster.freeze()
        #expect(frozen.count > 1, "the postmaster and its children: \(frozen)")
        defer { cluster.thaw(frozen) }

        // The first request waits out its deadline: nothing could know sooner that the server stopped.
        let first = try Self.timed(client, "auth.login", ["username": "alice1", "password": "secret1"])
        #expect(failureReason(first.answer) == "storage_unavailable", "\(first.answer)")
        #expect(first.ms < Self.deadlineMs + 3_000, "the first request took \(first.ms) ms")

        // admin.stats at once, from memory, saying down, although the pool's other connections have not yet missed a
        // deadline of their own.
        let stats = try Self.timed(admin, "admin.stats")
        #expect(stats.ms < Self.deadlineMs / 2, "admin.stats took \(stats.ms) ms")
        #expect(stats.answer["result"]?["storage"]?["state"] == "down", "\(stats.answer)")
        #expect(stats.answer["result"]?["users"] == 1, "users from the username directory in memory")

        // Every request after it, on every connection of the pool, answers before a deadline could pass again:
        // resumes (a token's lookup, with no Argon2id before it, whose idle-priority lane a loaded host delays).
        for index in 0..<6 {
            let next = try Self.timed(try daemon.connect(), "session.resume", ["token": .string(token)])
            #expect(failureReason(next.answer) == "storage_unavailable", "\(next.answer)")
            #expect(next.ms < Self.deadlineMs / 2, "request \(index) after the first missed deadline took \(next.ms) ms")
        }
        let write = try Self.timed(client, "users.register", ["username": "bobby1", "password": "secret1"])
        #expect(failureReason(write.answer) == "storage_unavailable", "\(write.answer)")
        let later = try Self.timed(admin, "admin.stats")
        #expect(later.ms < Self.deadlineMs / 2, "admin.stats took \(later.ms) ms")
        #expect(later.answer["result"]?["storage"]?["state"] == "down", "\(later.answer)")
        #expect(daemon.waitForLog("PostgreSQL stopped answering"))

        cluster.thaw(frozen)
        var back: JSONValue = [:]
        for _ in 0..<400 {
            back = try client.call("users.register", ["username": "carol1", "password": "secret1"])
            if back["result"] != nil { break }
            usleep(50_000)
        }
        #expect(back["result"]?["username"] == "carol1", "after the thaw: \(back)")
        #expect(try admin.call("admin.stats")["result"]?["storage"]?["state"] == "up")
        #expect(try client.call("auth.login", ["username": "alice1", "password": "secret1"])["result"]?["token"] != nil)
        #expect(daemon.stderr.components(separatedBy: "PostgreSQL stopped answering").count == 2,
                "the stall is logged once: \(daemon.stderr)")
    }
}
