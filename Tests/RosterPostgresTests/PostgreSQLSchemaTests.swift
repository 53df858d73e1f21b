import Dispatch
@testable import RosterPostgres
import RosterPostgresTesting
import RosterRuntime
import RosterStorage
import Testing

/// A database is Roster's before anything is written to it, and its history only ever grows at the end; two
/// daemons migrating one database at once take turns.
@Suite("PostgreSQL schema and migrations")
struct PostgreSQLSchemaTests {
    @Test func aDatabaseIsEmptyRostersOrForeign() {
        #expect(PostgreSQLSchema.identity(tables: [], applied: nil) == .empty)
        #expect(PostgreSQLSchema.identity(tables: ["roster_migrations", "users"], applied: ["0001_users"])
                == .roster(applied: ["0001_users"]))
        // Roster's own tables without their history are not adopted: nothing says which migrations made them.
        #expect(PostgreSQLSchema.identity(tables: ["users"], applied: nil) == .foreign(tables: ["users"]))
        #expect(PostgreSQLSchema.identity(tables: ["orders"], applied: nil) == .foreign(tables: ["orders"]))
    }

    @Test func onlyABeginningOfTheHistoryIsMigrated() {
        let migrations: [PostgreSQLSchema.Migration] = [("a", []), ("b", []), ("c", [])]
        #expect(PostgreSQLSchema.pending(after: [], in: migrations)?.map(\.name) == ["a", "b", "c"])
        #expect(PostgreSQLSchema.pending(after: ["a", "b"], in: migrations)?.map(\.name) == ["c"])
        #expect(PostgreSQLSchema.pending(after: ["a", "b", "c"], in: migrations)?.map(\.name) == [])
        #expect(PostgreSQLSchema.pending(after: ["a", "c"], in: migrations) == nil)
        #expect(PostgreSQLSchema.pending(after: ["a", "b", "c", "d"], in: migrations) == nil)
        #expect(PostgreSQLSchema.pending(after: ["x"], in: migrations) == nil)
        #expect(Set(PostgreSQLSchema.migrations.map(\.name)).count == PostgreSQLSchema.migrations.count)
    }

    /// The shipped history, in order: a migration is only ever added at the end (issue 16 added the audit log,
    /// issue 17 its remote, then the key check, then the outbox, then the passkeys, then a log-in's method, then contact cards, then app passwords).
    @Test func theHistoryIsTheShippedOneWithTheAppPasswordsLast() {
        #expect(PostgreSQLSchema.migrations.map(\.name) == ["0001_users", "0002_session_tokens", "0003_login_failures",
                                                            "0004_contacts", "0005_account_life", "0006_admin_users",
                                                            "0007_audit", "0008_audit_remote", "0009_key_check",
                                                            "0010_mail", "0011_passkeys", "0012_audit_method", "0013_contact_cards", "0014_app_passwords"])
    }

    /// The mail migration over a database of the schema before it: its accounts stay, each email unverified.
    @Test func theMailMigrationKeepsTheAccountsThereWereUnverified() throws {
        let cluster = try PostgresTestCluster.shared
        let connection = try PGBlockingConnection(conninfo: try cluster.createDatabase())
        defer { connection.close() }
        let before = Array(PostgreSQLSchema.migrations.prefix { $0.name != "0010_mail" })
        #expect(try PostgreSQLMigrator.migrate(connection, migrations: before).last == "0009_key_check")
        _ = try connection.execute("""
            INSERT INTO users(canonical, username_key, display, email, email_key, password_hash, created_at)
            VALUES ('ann001', 'ann001', 'ann001', 'ann@example.com', 'ann@example.com', '$argon2id$x', 1)
            """)
        #expect(try PostgreSQLMigrator.migrate(connection) == ["0010_mail", "0011_passkeys", "0012_audit_method", "0013_contact_cards", "0014_app_passwords"])
        let ann = try connection.execute("SELECT \(PostgreSQLQueries.credentialColumns) FROM users u LEFT JOIN totp t ON false")
            .rows.first.flatMap(PostgreSQLStorage.credential)
        #expect(ann?.account.email == "ann@example.com" && ann?.account.emailVerified == false)
        #expect(try connection.execute("SELECT count(*) FROM mail_outbox").rows.first?.int(0) == 0)
    }

    /// The passkey migration over a database of the schema before it: its accounts stay, with no passkey, and the
    /// new tables go with an account deleted afterwards.
    @Test func thePasskeyMigrationKeepsTheAccountsThereWere() throws {
        let cluster = try PostgresTestCluster.shared
        let connection = try PGBlockingConnection(conninfo: try cluster.createDatabase())
        defer { connection.close() }
        let before = Array(PostgreSQLSchema.migrations.prefix { $0.name != "0011_passkeys" })
        #expect(try PostgreSQLMigrator.migrate(connection, migrations: before).last == "0010_mail")
        _ = try connection.execute("""
            INSERT INTO users(canonical, username_key, display, password_hash, created_at)
            VALUES ('ann001', 'ann001', 'ann001', '$argon2id$x', 1)
            """)
        #expect(try PostgreSQLMigrator.migrate(connection) == ["0011_passkeys", "0012_audit_method", "0013_contact_cards", "0014_app_passwords"])
        let id = try #require(try connection.execute("SELECT id FROM users").rows.first?.int(0))
        let listed = PostgreSQLQueries.passkeys(of: id)
        #expect(try connection.execute(listed.sql, listed.params).rows.isEmpty)
        _ = try connection.execute("INSERT INTO passkey_handles(account_id, handle) VALUES ($1::bigint, '\\x07')", [.int(id)])
        _ = try connection.execute("""
            INSERT INTO passkeys(\(PostgreSQLQueries.passkeyColumns))
            VALUES ('\\x01', $1::bigint, -8, '\\x02', 0, '[]', 'k', 3, NULL)
            """, [.int(id)])
        #expect(try connection.execute(listed.sql, listed.params).rows.first?.passkey()?.name == "k")
        _ = try connection.execute("DELETE FROM users")
        #expect(try connection.execute("SELECT (SELECT count(*) FROM passkeys) + (SELECT count(*) FROM passkey_handles)")
                    .rows.first?.int(0) == 0)
    }

    /// Issue 17's migration over a database of issue 16's schema: its entries stay, read back with no remote.
    @Test func theAuditRemoteMigrationKeepsTheEntriesThereWere() throws {
        let cluster = try PostgresTestCluster.shared
        let connection = try PGBlockingConnection(conninfo: try cluster.createDatabase())
        defer { connection.close() }
        let before = Array(PostgreSQLSchema.migrations.prefix { $0.name != "0008_audit_remote" })
        #expect(try PostgreSQLMigrator.migrate(connection, migrations: before).last == "0007_audit")
        _ = try connection.execute("""
            INSERT INTO audit_log(time_ms, event, username, peer_uid, peer_pid, client, outcome)
            VALUES (5, 'login', 'alice1', 1000, 42, 'rosterctl', 'succeeded')
            """)
        #expect(try PostgreSQLMigrator.migrate(connection) == ["0008_audit_remote", "0009_key_check", "0010_mail",
                                                               "0011_passkeys", "0012_audit_method", "0013_contact_cards", "0014_app_passwords"])
        let read = PostgreSQLQueries.auditEntries(AuditQuery(limit: 10))
        let entries = try connection.execute(read.sql, read.params).rows.compactMap { $0.auditEntry() }
        #expect(entries == [AuditEntry(id: 1, timeMs: 5, record: AuditRecord(
            event: .login, username: "alice1", peer: AuditPeer(uid: 1_000, pid: 42, client: "rosterctl")))])
    }

    /// The method migration over a database of the schema before it: its entries stay, read back with no method,
    /// and the next ones keep theirs.
    @Test func theAuditMethodMigrationKeepsTheEntriesThereWereWithNoMethod() throws {
        let cluster = try PostgresTestCluster.shared
        let connection = try PGBlockingConnection(conninfo: try cluster.createDatabase())
        defer { connection.close() }
        let before = Array(PostgreSQLSchema.migrations.prefix { $0.name != "0012_audit_method" })
        #expect(try PostgreSQLMigrator.migrate(connection, migrations: before).last == "0011_passkeys")
        _ = try connection.execute("""
            INSERT INTO audit_log(time_ms, event, username, peer_uid, peer_pid, client, outcome, remote)
            VALUES (5, 'login', 'alice1', 1000, 42, 'rosterctl', 'succeeded', '203.0.113.5')
            """)
        #expect(try PostgreSQLMigrator.migrate(connection) == ["0012_audit_method", "0013_contact_cards", "0014_app_passwords"])
        let write = AuditWrite(AuditRecord(event: .login, username: "bobby1", peer: AuditPeer(uid: 0, pid: 1, client: nil),
                                           method: .recovery), origin: "test")
        let append = PostgreSQLQueries.appendAudit(write, now: .int(6))
        _ = try connection.execute(append.sql, append.params)
        let read = PostgreSQLQueries.auditEntries(AuditQuery(limit: 10))
        let entries = try connection.execute(read.sql, read.params).rows.compactMap { $0.auditEntry() }
        #expect(entries == [AuditEntry(id: 2, timeMs: 6, record: write.record), AuditEntry(id: 1, timeMs: 5, record: AuditRecord(
            event: .login, username: "alice1", peer: AuditPeer(uid: 1_000, pid: 42, client: "rosterctl", remote: "203.0.113.5")))])
        #expect(entries.map(\.record.method) == [.recovery, nil])
    }

    @Test func daemonsMigratingAtOnceApplyEachMigrationOnce() throws {
        let cluster = try PostgresTestCluster.shared
        let conninfo = try cluster.createDatabase()
        let outcomes = Locked<[Result<[String], PostgreSQLMigrator.Failure>]>([])
        let done = DispatchGroup()
        // Four at once: without the lock, two of them create one table together and one fails (most runs).
        for _ in 0..<4 {
            DispatchQueue.global().async(group: done) {
                do {
                    let connection = try PGBlockingConnection(conninfo: conninfo)
                    defer { connection.close() }
                    let applied = try PostgreSQLMigrator.migrate(connection)
                    outcomes.withLock { $0.append(.success(applied)) }
                } catch let failure as PostgreSQLMigrator.Failure {
                    outcomes.withLock { $0.append(.failure(failure)) }
                } catch {
                    outcomes.withLock { $0.append(.failure(.failed(step: "connect", .timeout))) }
                }
            }
        }
        done.wait()
        let applied = try outcomes.withLock { $0 }.map { try $0.get() }
        #expect(applied.count == 4)
        #expect(applied.flatMap { $0 }.sorted() == PostgreSQLSchema.migrations.map(\.name).sorted())
        let name = try #require(conninfo.split(separator: "=").last.map(String.init))
        let recorded = try cluster.psql("SELECT string_agg(name, ',' ORDER BY position) FROM roster_migrations", database: name)
        #expect(recorded.trimmingCharacters(in: .whitespacesAndNewlines)
                == PostgreSQLSchema.migrations.map(\.name).joined(separator: ","))
    }

    @Test func anotherApplicationsDatabaseIsRefusedUntouched() throws {
        let cluster = try PostgresTestCluster.shared
        let conninfo = try cluster.createDatabase()
        let name = try #require(conninfo.split(separator: "=").last.map(String.init))
        try cluster.psql("CREATE TABLE orders(id int)", database: name)
        let connection = try PGBlockingConnection(conninfo: conninfo)
        defer { connection.close() }
        #expect(throws: PostgreSQLMigrator.Failure.notOurs(tables: ["orders"])) { try PostgreSQLMigrator.migrate(connection) }
        #expect(try cluster.psql("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'", database: name)
            .trimmingCharacters(in: .whitespacesAndNewlines) == "1")
    }

    @Test func aNewerRostersDatabaseIsRefused() throws {
        let cluster = try PostgresTestCluster.shared
        let conninfo = try cluster.createDatabase()
        let name = try #require(conninfo.split(separator: "=").last.map(String.init))
        let connection = try PGBlockingConnection(conninfo: conninfo)
        defer { connection.close() }
        try PostgreSQLMigrator.migrate(connection)
        try cluster.psql("INSERT INTO roster_migrations VALUES (99, '0099_from_the_future', 0)", database: name)
        let expected = PostgreSQLSchema.migrations.map(\.name) + ["0099_from_the_future"]
        #expect(throws: PostgreSQLMigrator.Failure.unknownHistory(applied: expected)) { try PostgreSQLMigrator.migrate(connection) }
        // Migrating what is up to date applies nothing.
        try cluster.psql("DELETE FROM roster_migrations WHERE position = 99", database: name)
        #expect(try PostgreSQLMigrator.migrate(connection) == [])
    }

    /// The contact cards migration over a database of the schema before it: each contact becomes
    /// `roster-contact-<id>` at revision id, and the owner's book goes on from the newest.
    @Test func theContactCardsMigrationGivesTheContactsThereWereTheirOldUIDs() throws {
        let cluster = try PostgresTestCluster.shared
        let connection = try PGBlockingConnection(conninfo: try cluster.createDatabase())
        defer { connection.close() }
        let before = Array(PostgreSQLSchema.migrations.prefix { $0.name != "0013_contact_cards" })
        #expect(try PostgreSQLMigrator.migrate(connection, migrations: before).last == "0012_audit_method")
        _ = try connection.execute("""
            INSERT INTO users(id, canonical, username_key, display, password_hash, created_at)
            VALUES (1, 'ann001', 'ann001', 'ann001', '$argon2id$x', 1)
            """)
        _ = try connection.execute("""
            INSERT INTO contacts(id, user_id, name, created_at, updated_at, key_folded, key_initials, key_pinyin,
                key_pinyin_initials, key_hangul_initials, key_phone_digits)
            VALUES (3, 1, 'Ann', 1, 1, 'ann', 'a', '', '', '', ''), (7, 1, 'Bo', 1, 1, 'bo', 'b', '', '', '', '')
            """)
        #expect(try PostgreSQLMigrator.migrate(connection) == ["0013_contact_cards", "0014_app_passwords"])
        let rows = try connection.execute("SELECT uid, revision, card IS NULL FROM contacts ORDER BY id").rows
        #expect(rows.map { $0.text(0) } == ["roster-contact-3", "roster-contact-7"])
        #expect(rows.map { $0.int(1) } == [3, 7])
        #expect(rows.allSatisfy { $0.bool(2) == true })
        #expect(try connection.execute("SELECT revision FROM contact_books WHERE user_id = 1").rows.first?.int(0) == 7)
    }
}
