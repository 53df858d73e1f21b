import Foundation
import RosterCore
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Testing
@testable import RosterSQLite

/// The SQLite audit log beyond the storage contract: a change and its entry are one commit, so a failure (or a
/// crash) between them cannot leave one without the other; the table refuses UPDATE; queries and pruning use
/// their indexes; pruning a long log goes in batches.
@Suite("SQLite audit log")
struct SQLiteAuditTests {
    private typealias Harness = SQLiteStorageTests.Harness
    private static let newHash = "$argon2id$v=19$m=19456,t=2,p=1$bmV3c2FsdA$bmV3aGFzaA"
    private let peer = AuditPeer(uid: 1_000, pid: 42, client: "rosterctl")

    private func token(_ byte: UInt8) -> [UInt8] { [UInt8](repeating: byte, count: 32) }

    /// An entry the table's CHECK refuses (a negative count): its insert fails after the change was made.
    private var refusedEntry: AuditRecord {
        AuditRecord(event: .login, username: "alice1", peer: peer, outcome: .failed, reason: "wrong_password",
                    suppressed: -1)
    }

    @Test func anEntryThatCannotBeWrittenTakesItsChangeWithIt() throws {
        let harness = try Harness()
        let storage = try harness.open()
        var heard: [AuditEntry] = []
        storage.onAudit = { entry, _ in heard.append(entry) }
        let alice = try harness.answer {
            storage.acting(for: .daemon).createAccount(NewAccount(username: "alice1", display: "A", email: "a@example.com",
                                                                  passwordHash: SQLiteStorageTests.hash), completion: $0)
        }.get()
        try harness.answer { storage.acting(for: .daemon).storeToken(hash: token(1), for: alice.id,
                                                                     completion: $0) }.get()
        let bad = refusedEntry
        func refused<T>(_ what: String, _ call: (@escaping StorageCompletion<T>) -> Void) throws {
            let answer: Result<T, StorageFailure> = try harness.answer(call)
            #expect(answer.isFailureOther, "\(what) answered \(answer)")
        }

        try refused("registration") {
            storage.acting(for: .daemon).createAccount(NewAccount(username: "bobby1", display: "B", email: nil, passwordHash: SQLiteStorageTests.hash),
                                                       audit: bad, completion: $0)
        }
        try refused("log-in") {
            storage.acting(for: .daemon).storeToken(hash: token(2), for: alice.id, client: nil, audit: bad,
                                                    completion: $0)
        }
        try refused("failure") { storage.acting(for: .daemon).recordFailure(keys: ["account:alice1"], audit: bad,
                                                                            completion: $0) }
        try refused("password change") {
            storage.acting(for: .daemon).changePassword(of: alice.id, to: Self.newHash, keeping: nil, audit: bad,
                                                        completion: $0)
        }
        try refused("email change") {
            storage.acting(for: .daemon).changeEmail(of: alice.id, to: "b@example.com", audit: bad, completion: $0)
        }
        try refused("log-out") { storage.acting(for: .daemon).revokeToken(hash: token(1), audit: bad, completion: $0) }
        try refused("lock") { storage.acting(for: .daemon).lockAccount(alice.id, reason: "x", audit: bad,
                                                                       completion: $0) }
        try refused("deletion") {
            storage.acting(for: .daemon).deleteAccount(alice.id, failureKeys: [], audit: bad, completion: $0)
        }
        try refused("recovery codes") {
            storage.acting(for: .daemon).replaceRecoveryCodes(of: alice.id, hashes: [token(5)], audit: bad,
                                                              completion: $0)
        }

        // Each change went with its entry: everything is as it was before the first refused write.
        let database = try Database(path: harness.path)
        func count(_ sql: String) throws -> String? { try database.pragmaValue(sql) }
        #expect(try count("SELECT count(*) FROM users") == "1")
        #expect(try count("SELECT email || ',' || password_hash || ',' || (locked_at IS NULL) FROM users")
                == "a@example.com,\(SQLiteStorageTests.hash),1")
        #expect(try count("SELECT count(*) FROM session_tokens") == "1")
        #expect(try count("SELECT count(*) FROM login_failures") == "0")
        #expect(try count("SELECT count(*) FROM recovery_codes") == "0")
        #expect(try count("SELECT count(*) FROM audit_log") == "0")
        #expect(heard == [])
        #expect(try harness.answer { storage.acting(for: .daemon).isUsernameTaken("bobby1",
                completion: $0) }.get() == false)
        #expect(try harness.answer { storage.acting(for: .daemon).resumeToken(hash: token(1), idleLimitMs: 60_000,
                                                                              completion: $0) }.get()?.id == alice.id)
        // The same writes with an entry the table takes go through, each with its entry.
        var good = bad
        good.suppressed = 0
        try harness.answer { storage.acting(for: .daemon).recordFailure(keys: ["account:alice1"], audit: good,
                                                                        completion: $0) }.get()
        #expect(try count("SELECT count(*) FROM login_failures") == "1")
        #expect(try count("SELECT count(*) FROM audit_log") == "1")
        #expect(heard.map(\.record) == [good])
    }

    @Test func theLogRefusesUpdatesAndOnlyPruningDeletes() throws {
        let harness = try Harness()
        let storage = try harness.open()
        let entry = try harness.answer {
            storage.acting(for: .daemon).appendAudit(AuditRecord(event: .locked, username: "alice1", peer: peer, reason: "phished"),
                                                     completion: $0)
        }.get()
        let database = try Database(path: harness.path)
        for update in ["UPDATE audit_log SET reason = 'nothing happened'", "UPDATE audit_log SET username = NULL",
                       "UPDATE audit_log SET time_ms = 0 WHERE id = \(entry.id)"] {
            #expect(throws: StoreError.self, "\(update)") { try database.execute(update) }
        }
        #expect(try database.pragmaValue("SELECT reason || ',' || username || ',' || time_ms FROM audit_log")
                == "phished,alice1,\(entry.timeMs)")
    }

    @Test func pruningALongLogGoesInBatchesAndCountsThemAll() throws {
        let harness = try Harness()
        let storage = try harness.open()
        let database = try Database(path: harness.path)
        let now = harness.clock.nowMs()
        let old = SQLiteStorage.pruneBatch * 2 + 500
        try database.transaction { () throws(StoreError) in
            let store = AuditLogStore(database: database)
            for index in 0..<old {
                _ = try store.append(AuditRecord(event: .login, username: nil, peer: peer), at: now - 10_000 - Int64(index))
            }
            _ = try store.append(AuditRecord(event: .logout, username: "alice1", peer: peer), at: now)
        }
        #expect(try harness.answer { storage.acting(for: .daemon).pruneAudit(before: now - 1,
                                                                             completion: $0) }.get() == old)
        #expect(try database.pragmaValue("SELECT group_concat(event) FROM audit_log") == "logout")
    }

    @Test func queriesAndPruningUseTheirIndexes() throws {
        let harness = try Harness()
        _ = try harness.open()
        let database = try Database(path: harness.path)
        func plan(_ sql: String) throws -> String {
            let statement = try database.prepare("EXPLAIN QUERY PLAN " + sql)
            var details: [String] = []
            while try statement.step() { details.append(statement.string(at: 3) ?? "") }
            return details.joined(separator: "; ")
        }
        let columns = AuditLogStore.columns
        #expect(try plan("SELECT \(columns) FROM audit_log WHERE username = 'a' ORDER BY id DESC LIMIT 10")
            .contains("audit_log_username"))
        #expect(try plan("SELECT \(columns) FROM audit_log WHERE event = 'login' AND id < 5 ORDER BY id DESC LIMIT 10")
            .contains("audit_log_event"))
        let newest = try plan("SELECT \(columns) FROM audit_log ORDER BY id DESC LIMIT 10")
        #expect(!newest.contains("TEMP B-TREE"), "newest first needs no sort: \(newest)")
        let prune = try plan(AuditLogStore.pruneSQL.replacingOccurrences(of: "?", with: "5"))
        #expect(prune.contains("audit_log_time"), "pruning finds old entries by time: \(prune)")
    }

    /// Issue 16's migration over a database of issue 15's and 16's earlier schema: the rows stay, the log is empty.
    @Test func theAuditMigrationKeepsWhatThereWas() throws {
        let harness = try Harness()
        let database = try Database(path: harness.path)
        let before = Array(RosterSchema.migrations.prefix { $0.name != "0008_audit" })
        _ = try Migrator.migrate(database, migrations: before, now: 1)
        try database.execute("""
            INSERT INTO users(id, canonical, display, password_hash, created_at) VALUES (1, 'ann001', 'ann001', '$argon2id$x', 1);
            """)
        #expect(try Migrator.migrate(database, migrations: RosterSchema.migrations, now: 2) == ["0008_audit", "0009_audit_remote", "0010_key_check",
                                                                                         "0011_mail", "0012_passkeys",
                                                                                         "0013_audit_method", "0014_contact_cards", "0015_app_passwords"])
        #expect(try database.pragmaValue("SELECT count(*) FROM users") == "1")
        #expect(try database.pragmaValue("SELECT count(*) FROM audit_log") == "0")
    }

    /// Issue 17's migration over a database of issue 16's schema: its entries stay, read back with no remote, and
    /// the next one keeps its own.
    @Test func theAuditRemoteMigrationKeepsTheEntriesThereWere() throws {
        let harness = try Harness()
        let database = try Database(path: harness.path)
        let before = Array(RosterSchema.migrations.prefix { $0.name != "0009_audit_remote" })
        #expect(try Migrator.migrate(database, migrations: before, now: 1).last == "0008_audit")
        try database.execute("""
            INSERT INTO audit_log(time_ms, event, username, peer_uid, peer_pid, client, outcome)
            VALUES (5, 'login', 'alice1', 1000, 42, 'rosterctl', 'succeeded');
            """)
        #expect(try Migrator.migrate(database, migrations: RosterSchema.migrations, now: 2) == ["0009_audit_remote", "0010_key_check",
                                                                                         "0011_mail", "0012_passkeys",
                                                                                         "0013_audit_method", "0014_contact_cards", "0015_app_passwords"])
        let store = AuditLogStore(database: database)
        let gateway = AuditRecord(event: .login, username: "bobby1",
                                  peer: AuditPeer(uid: 998, pid: 7, client: "roster-web", remote: "203.0.113.5"))
        let appended = try store.append(gateway, at: 6)
        #expect(try store.entries(AuditQuery(limit: 10)) == [appended, AuditEntry(id: 1, timeMs: 5, record: AuditRecord(
            event: .login, username: "alice1", peer: AuditPeer(uid: 1_000, pid: 42, client: "rosterctl")))])
    }

    /// The method migration over a database of the schema before it: its entries stay, read back with no method
    /// (a log-in before it said nothing of how it was proved), and the next ones keep theirs. A method this
    /// rosterd does not know (a newer one's, or another case) reads as none, and the entry is still read.
    @Test func theAuditMethodMigrationKeepsTheEntriesThereWereWithNoMethod() throws {
        let harness = try Harness()
        let database = try Database(path: harness.path)
        let before = Array(RosterSchema.migrations.prefix { $0.name != "0013_audit_method" })
        #expect(try Migrator.migrate(database, migrations: before, now: 1).last == "0012_passkeys")
        try database.execute("""
            INSERT INTO audit_log(time_ms, event, username, peer_uid, peer_pid, client, outcome, remote)
            VALUES (5, 'login', 'alice1', 1000, 42, 'rosterctl', 'succeeded', '203.0.113.5');
            """)
        #expect(try Migrator.migrate(database, migrations: RosterSchema.migrations, now: 2) == ["0013_audit_method", "0014_contact_cards", "0015_app_passwords"])
        let store = AuditLogStore(database: database)
        let old = AuditEntry(id: 1, timeMs: 5, record: AuditRecord(
            event: .login, username: "alice1", peer: AuditPeer(uid: 1_000, pid: 42, client: "rosterctl", remote: "203.0.113.5")))
        let appended = try LoginMethod.allCases.map { method in
            try store.append(AuditRecord(event: .login, username: "alice1", peer: AuditPeer(uid: 0, pid: 1, client: nil),
                                         method: method), at: 6)
        }
        #expect(try store.entries(AuditQuery(limit: 10)) == appended.reversed() + [old])
        #expect(appended.map(\.record.method) == [.password, .passkey, .recovery, .appPassword])

        try database.execute("""
            INSERT INTO audit_log(time_ms, event, username, peer_uid, peer_pid, outcome, method)
            VALUES (7, 'login', 'bobby1', 0, 1, 'succeeded', 'smartcard'), (8, 'login', 'bobby1', 0, 1, 'succeeded', 'PASSKEY');
            """)
        let unknown = try store.entries(AuditQuery(username: "bobby1", limit: 10))
        #expect(unknown.map(\.id) == [7, 6])
        #expect(unknown.allSatisfy { $0.record == AuditRecord(event: .login, username: "bobby1", peer: AuditPeer(uid: 0, pid: 1, client: nil)) })
    }
}

extension Result where Failure == StorageFailure {
    fileprivate var isFailureOther: Bool {
        if case .failure(.other) = self { return true }
        return false
    }
}
