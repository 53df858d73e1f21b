import Foundation
import Glibc
import RosterPostgresTesting
import RosterProtocol
import Testing

/// `admin.backup` on the PostgreSQL backend, against a real throwaway server: a snapshot of the shared database
/// written as a SQLite file that rosterd on SQLite then serves; the SQLite backup's refusals; each audited. And a
/// SIGHUP's queue budget reaching the PostgreSQL pool.
@Suite("rosterd on PostgreSQL: admin.backup and reload")
struct PostgresBackupTests {
    private func events(_ answer: JSONValue) -> [String] {
        (answer["result"]?["items"]?.arrayValue ?? []).map {
            [$0["event"]?.stringValue, $0["outcome"]?.stringValue, $0["reason"]?.stringValue].map { $0 ?? "-" }
                .joined(separator: " ")
        }
    }

    @Test func aBackupIsASnapshotThatRosterdOnSQLiteServes() throws {
        let daemon = try SharedDatabase().daemon()
        let (token, before) = try CopyFixture.fill(daemon)
        let restored = try TemporaryDirectory()
        mkdir(restored.path + "/state", 0o700)
        let target = restored.path + "/state/roster.db"
        let admin = try daemon.connect()
        let answer = try admin.call("admin.backup", ["path": .string(target)])
        #expect(answer["result"]?["path"] == .string(target), "\(answer)")
        let pages = answer["result"]?["pages"]?.int64Value ?? 0
        #expect(pages > 0 && answer["result"]?["bytes"]?.int64Value == pages * 4_096, "\(answer)")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: restored.path + "/state")) ?? []) == ["roster.db"])
        #expect(events(try admin.call("admin.audit", ["event": "backup"])) == ["backup succeeded -"])

        // The users, the token, the contacts and the audit log, as rosterd on SQLite serves them from the copy.
        let onSQLite = try TestDaemon(directory: restored, config: CopyFixture.config)
        #expect(try CopyFixture.contents(onSQLite, token: token) == before)
        let client = try onSQLite.connect()
        #expect(try client.call("users.check_username", ["username": "ALICE1"])["result"]?["code"] == "taken")
        let log = events(try onSQLite.connect().call("admin.audit", ["username": "alice1"]))
        #expect(log.suffix(3) == ["login succeeded -", "login failed wrong_password", "register succeeded -"], "\(log)")
    }

    @Test func badTargetsAreRefusedAsOnSQLiteAndAudited() throws {
        let daemon = try SharedDatabase().daemon()
        let admin = try daemon.connect()
        let directory = daemon.directory.path
        try writeFile(directory + "/existing.db", "mine")
        let device = directory + "/null"
        if getuid() == 0 { mknod(device, S_IFCHR | 0o666, dev_t(1 << 8 | 3)) } else { mkfifo(device, 0o600) }
        let cases: [(String, String)] = [
            (directory + "/existing.db", "target_exists"), (directory, "not_a_regular_file"),
            (device, "not_a_regular_file"), (directory + "/missing/backup.db", "bad_directory"),
        ]
        for (path, reason) in cases {
            let answer = try admin.call("admin.backup", ["path": .string(path)])
            #expect(answer["error"]?["code"] == -32602 && answer["error"]?["data"]?["reason"] == .string(reason),
                    "\(path): \(answer)")
        }
        #expect(try readFile(directory + "/existing.db") == "mine")
        #expect(!((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).contains { $0.contains("partial") })
        #expect(events(try admin.call("admin.audit", ["event": "backup"]))
                == ["backup failed bad_directory", "backup failed not_a_regular_file", "backup failed not_a_regular_file",
                    "backup failed target_exists"])
    }

    @Test func aSighupAppliesTheNewQueueBudgetToThePool() throws {
        let shared = try SharedDatabase()
        let daemon = try TestDaemon(config: SharedDatabase.config(conninfo: shared.conninfo, extra: "[Server]\nMaxQueuedJobs=100\n"))
        func limit() throws -> Int64? {
            try daemon.connect().call("admin.stats")["result"]?["queues"]?["storage"]?["limit"]?.int64Value
        }
        #expect(try limit() == 100)
        try writeFile(daemon.directory.path + "/rosterd.conf",
                      SharedDatabase.config(conninfo: shared.conninfo, extra: "[Server]\nMaxQueuedJobs=50\n"))
        daemon.signal(SIGHUP)
        #expect(daemon.waitForLog("configuration reloaded"))
        #expect(try limit() == 50)
    }
}
