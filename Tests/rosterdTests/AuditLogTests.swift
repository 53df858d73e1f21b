import CSQLite
import Foundation
import Glibc
import RosterProtocol
import Testing

/// The audit log against the real daemon on SQLite: an answered change keeps its entry through `kill -9`,
/// and no password, code or token reaches the database files or the daemon's log.
@Suite("The audit log against the real daemon", .serialized)
struct AuditLogTests {
    private static let config = "[Hashing]\nMemoryKiB=8192\nIterations=1\n[Login]\nRateLimitBurst=100000\n[Server]\nLogLevel=debug\n"

    /// The rows of `audit_log`, oldest first, each as `event outcome username reason peer_uid peer_pid client`.
    private func auditRows(_ path: String) throws -> [String] {
        var connection: OpaquePointer?
        guard sqlite3_open_v2(path, &connection, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else {
            throw HarnessError(description: "cannot open \(path)")
        }
        defer { sqlite3_close(connection) }
        var statement: OpaquePointer?
        let sql = "SELECT event, outcome, username, reason, peer_uid, peer_pid, client, method FROM audit_log ORDER BY id"
        guard sqlite3_prepare_v2(connection, sql, -1, &statement, nil) == SQLITE_OK else {
            throw HarnessError(description: String(cString: sqlite3_errmsg(connection)))
        }
        defer { sqlite3_finalize(statement) }
        var rows: [String] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            rows.append((0..<8).map { column in
                sqlite3_column_text(statement, column).map { String(cString: $0) } ?? "-"
            }.joined(separator: " "))
        }
        return rows
    }

    private func reason(_ answer: JSONValue) -> String? { answer["error"]?["data"]?["reason"]?.stringValue }

    private var me: String { "\(getuid()) \(getpid())" }

    @Test func killNineRightAfterARegistrationsAnswerKeepsItsEntry() throws {
        let daemon = try TestDaemon(config: Self.config)
        let client = try daemon.connect()
        _ = try client.call("session.hello", ["client": "audit-kill"])
        #expect(try client.call("users.register", ["username": "alice1", "password": "secret1"])["result"]?["username"]
                == "alice1")
        daemon.signal(SIGKILL)
        #expect(daemon.waitForExit() == 128 + SIGKILL)
        #expect(try auditRows(daemon.databasePath) == ["register succeeded alice1 - \(me) audit-kill -"])
    }

    @Test func noPasswordCodeOrTokenReachesTheDatabaseFilesOrTheLog() throws {
        let daemon = try TestDaemon(config: Self.config)
        let alice = try daemon.connect()
        _ = try alice.call("session.hello", ["client": "audit-grep"])
        var secrets = ["secret1", "wrong12", "better22", "better33"]
        _ = try alice.call("users.register", ["username": "alice1", "password": "secret1"])
        #expect(reason(try alice.call("auth.login", ["username": "alice1", "password": "wrong12"])) == "wrong_password")
        secrets.append(try #require(try alice.call("auth.login", ["username": "alice1", "password": "secret1"])["result"]?[
            "token"]?.stringValue))
        _ = try alice.call("account.change_password", ["current": "secret1", "new": "better22"])
        let codes = try #require(try alice.call("account.recovery_codes", ["password": "better22"])["result"]?["codes"]?
            .arrayValue).compactMap(\.stringValue)
        secrets += codes + codes.map { $0.replacingOccurrences(of: "-", with: "") }
        let enrolled = try alice.call("account.totp_enroll", ["password": "better22"])["result"]
        let secret = try #require(enrolled?["secret"]?.stringValue)
        secrets += [secret, secret.lowercased()]
        let code = try oathtool(secret, at: Int64(time(nil)))
        #expect(try alice.call("account.totp_confirm", ["code": .string(code)])["result"] == [:])
        let recovering = try daemon.connect()
        let recovered = try recovering.call("auth.recover", ["username": "alice1", "code": .string(codes[0]),
                                                              "new_password": "better33"])
        secrets.append(try #require(recovered["result"]?["token"]?.stringValue))
        _ = try recovering.call("session.logout")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)

        let rows = try auditRows(daemon.databasePath)
        #expect(rows.count == 9, "\(rows)")
        #expect(rows.first == "register succeeded alice1 - \(me) audit-grep -")
        // Each log-in's row says how it was proved: the password twice (wrong, then right), then the recovery's.
        #expect(rows.filter { $0.hasPrefix("login ") }.map { $0.split(separator: " ").last ?? "" }
                == ["password", "password", "recovery"], "\(rows)")
        let log = daemon.stderr
        #expect(log.components(separatedBy: "audit: ").count - 1 == rows.count, "each entry is a journal line")
        let directory = daemon.databasePath.split(separator: "/").dropLast().joined(separator: "/")
        let files = try FileManager.default.contentsOfDirectory(atPath: "/" + directory).map { "/\(directory)/\($0)" }
        #expect(files.contains(daemon.databasePath))
        let contents = try files.map { try Data(contentsOf: URL(fileURLWithPath: $0)) } + [Data(log.utf8)]
        for text in secrets {
            let needle = Data(text.utf8)
            #expect(contents.allSatisfy { $0.range(of: needle) == nil }, "\(text.prefix(4))… was written")
        }
        // The TOTP code too, though six digits could turn up in binary by chance: only as a word of the log.
        #expect(!log.split { !$0.isNumber }.contains { $0 == code })
    }
}
