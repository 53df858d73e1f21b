import Foundation
import Testing
import CSQLite
import RosterCore
import RosterSQLite
import RosterStorage

@Suite struct MigratorTests {
    @Test func rosterSchemaAppliesOnceAndReopenIsANoOp() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("a.db"))
        let applied = try Migrator.migrate(db, migrations: RosterSchema.migrations, now: 111)
        #expect(applied == ["0001_users", "0002_session_tokens", "0003_login_failures", "0004_contacts",
                            "0005_contacts_by_folded_name", "0006_account_life", "0007_admin_users", "0008_audit",
                            "0009_audit_remote", "0010_key_check", "0011_mail", "0012_passkeys",
                            "0013_audit_method", "0014_contact_cards", "0015_app_passwords"])
        #expect(try Migrator.migrate(db, migrations: RosterSchema.migrations, now: 222) == [])
        db.close()

        let reopened = try Database(path: dir.path("a.db"))
        #expect(try Migrator.migrate(reopened, migrations: RosterSchema.migrations, now: 333) == [])
        #expect(try Migrator.appliedNames(reopened) == RosterSchema.migrations.map(\.name))
        #expect(try reopened.pragmaValue("SELECT group_concat(applied_at) FROM schema_migrations")
                == Array(repeating: "111", count: RosterSchema.migrations.count).joined(separator: ","))
    }

    /// Issue 15's migration over a database of issue 14's schema: the tokens it held still resume, with no client.
    @Test func accountLifeMigrationKeepsTheTokensThereWere() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("a.db"))
        let before = Array(RosterSchema.migrations.prefix { $0.name != "0006_account_life" })
        _ = try Migrator.migrate(db, migrations: before, now: 1)
        try db.execute("""
            INSERT INTO users(id, canonical, display, password_hash, created_at) VALUES (1, 'ann001', 'ann001', '$argon2id$x', 1);
            INSERT INTO session_tokens(token_hash, user_id, created_at, last_used_at) VALUES (zeroblob(32), 1, 5, 5);
            """)
        #expect(try Migrator.migrate(db, migrations: RosterSchema.migrations, now: 2) == ["0006_account_life", "0007_admin_users",
                                                                                         "0008_audit", "0009_audit_remote",
                                                                                         "0010_key_check", "0011_mail",
                                                                                         "0012_passkeys", "0013_audit_method", "0014_contact_cards", "0015_app_passwords"])
        #expect(try SessionTokenStore(database: db).resume(tokenHash: [UInt8](repeating: 0, count: 32), now: 6,
                                                           idleLimitMs: 1_000)?.id == 1)
        #expect(try db.pragmaValue("SELECT count(*) FROM session_tokens WHERE client IS NULL") == "1")
    }

    /// The mail migration over a database of the schema before it: its accounts stay, each with its email
    /// unverified, and read back as before.
    @Test func theMailMigrationKeepsTheAccountsThereWereUnverified() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("a.db"))
        let before = Array(RosterSchema.migrations.prefix { $0.name != "0011_mail" })
        _ = try Migrator.migrate(db, migrations: before, now: 1)
        try db.execute("""
            INSERT INTO users(id, canonical, display, email, password_hash, created_at)
            VALUES (1, 'ann001', 'ann001', 'ann@example.com', '$argon2id$x', 1);
            """)
        #expect(try Migrator.migrate(db, migrations: RosterSchema.migrations, now: 2) == ["0011_mail", "0012_passkeys",
                                                                                             "0013_audit_method", "0014_contact_cards", "0015_app_passwords"])
        let ann = try UserStore(database: db).user(id: 1)
        #expect(ann?.email == "ann@example.com" && ann?.emailVerified == false)
        #expect(try db.pragmaValue("SELECT count(*) FROM mail_outbox") == "0")
        #expect(try db.pragmaValue("SELECT count(*) FROM mail_codes") == "0")
    }

    /// The passkey migration over a database of the schema before it: its accounts stay, with no passkey and no
    /// handle, and the new tables go with an account deleted afterwards.
    @Test func thePasskeyMigrationKeepsTheAccountsThereWere() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("a.db"))
        let before = Array(RosterSchema.migrations.prefix { $0.name != "0012_passkeys" })
        _ = try Migrator.migrate(db, migrations: before, now: 1)
        try db.execute("""
            INSERT INTO users(id, canonical, display, email, password_hash, created_at)
            VALUES (1, 'ann001', 'ann001', 'ann@example.com', '$argon2id$x', 1);
            """)
        #expect(try Migrator.migrate(db, migrations: RosterSchema.migrations, now: 2) == ["0012_passkeys", "0013_audit_method", "0014_contact_cards", "0015_app_passwords"])
        #expect(try UserStore(database: db).user(id: 1)?.canonical == "ann001")
        let store = PasskeyStore(database: db)
        #expect(try store.passkeys(of: 1) == [])
        #expect(try store.userHandle(of: 1, candidate: [7]) == [7])
        #expect(try store.add(StoredPasskey(credentialID: [1], account: 1, algorithm: -8, publicKey: [2], signCount: 0,
                                            transports: [], name: "k"), limit: 20, now: 3).isAdded)
        try db.execute("DELETE FROM users WHERE id = 1")
        #expect(try db.pragmaValue("SELECT count(*) FROM passkeys") == "0")
        #expect(try db.pragmaValue("SELECT count(*) FROM passkey_handles") == "0")
    }

    @Test func appendedMigrationIsAppliedAlone() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("a.db"))
        let first: [Migrator.Migration] = [(name: "a", sql: "CREATE TABLE a(x INTEGER) STRICT")]
        try Migrator.migrate(db, migrations: first, now: 1)
        let more = first + [(name: "b", sql: "CREATE TABLE b(x INTEGER) STRICT")]
        #expect(try Migrator.migrate(db, migrations: more, now: 2) == ["b"])
        #expect(try Migrator.appliedNames(db) == ["a", "b"])
    }

    @Test func rewrittenHistoryIsRefused() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("a.db"))
        try Migrator.migrate(db, migrations: [(name: "a", sql: "SELECT 1"), (name: "b", sql: "SELECT 1")], now: 1)
        #expect(throws: StoreError.unknownAppliedMigration(name: "b")) {
            try Migrator.migrate(db, migrations: [(name: "a", sql: "SELECT 1"), (name: "c", sql: "SELECT 1")], now: 2)
        }
        #expect(throws: StoreError.migrationOrderChanged(name: "x")) {
            try Migrator.migrate(db, migrations: [(name: "a", sql: "SELECT 1"), (name: "x", sql: "SELECT 1"),
                                                  (name: "b", sql: "SELECT 1")], now: 2)
        }
        #expect(throws: StoreError.duplicateMigration(name: "a")) {
            try Migrator.migrate(db, migrations: [(name: "a", sql: "SELECT 1"), (name: "a", sql: "SELECT 1")], now: 2)
        }
        #expect(try Migrator.appliedNames(db) == ["a", "b"])
    }

    @Test func failingMigrationLeavesNoTrace() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("a.db"))
        let migrations: [Migrator.Migration] = [
            (name: "good", sql: "CREATE TABLE good(x INTEGER) STRICT"),
            (name: "bad", sql: "CREATE TABLE half(x INTEGER) STRICT; THIS IS NOT SQL"),
        ]
        #expect(throws: StoreError.self) { try Migrator.migrate(db, migrations: migrations, now: 1) }
        #expect(try Migrator.appliedNames(db) == ["good"])
        #expect(try db.pragmaValue("SELECT count(*) FROM sqlite_schema WHERE name = 'half'") == "0")
        #expect(!db.isInTransaction)
    }

    @Test func tablesAreStrict() throws {
        let dir = try TemporaryDirectory()
        let db = try dir.rosterDatabase()
        do {
            try db.execute("""
                INSERT INTO users(canonical, display, password_hash, created_at)
                VALUES ('frank1', 'frank1', '$argon2id$x', 'yesterday')
                """)
            Issue.record("STRICT table accepted text in an INTEGER column")
        } catch {
            #expect(error.code == SQLITE_CONSTRAINT)
        }
        #expect(try db.pragmaValue("SELECT strict FROM pragma_table_list WHERE name = 'users'") == "1")
        #expect(try db.pragmaValue("SELECT strict FROM pragma_table_list WHERE name = 'session_tokens'") == "1")
        #expect(try db.pragmaValue("SELECT strict FROM pragma_table_list WHERE name = 'login_failures'") == "1")
    }

    @Test func schemaRejectsNonArgon2idHashes() throws {
        let dir = try TemporaryDirectory()
        let db = try dir.rosterDatabase()
        for hash in ["plaintext", "$ARGON2ID$v=19", "$argon2i$v=19$m=1"] {
            #expect(throws: StoreError.self, "\(hash)") {
                let insert = try db.prepare("""
                    INSERT INTO users(canonical, display, password_hash, created_at) VALUES ('gina01', 'gina01', ?, 1)
                    """)
                try insert.bind(hash, at: 1)
                try insert.run()
            }
        }
    }

    /// The contact cards migration over a database of the schema before it: each contact becomes
    /// `roster-contact-<id>` at revision id, with the card its fields make, and the owner's changes go on after it.
    @Test func theContactCardsMigrationGivesTheContactsThereWereTheirOldUIDs() throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("a.db"))
        let before = Array(RosterSchema.migrations.prefix { $0.name != "0014_contact_cards" })
        _ = try Migrator.migrate(db, migrations: before, now: 1)
        try db.execute("""
            INSERT INTO users(id, canonical, display, password_hash, created_at) VALUES (1, 'ann001', 'ann001', '$argon2id$x', 1);
            INSERT INTO contacts(id, user_id, name, phone, created_at, updated_at, key_folded, key_initials, key_pinyin,
                key_pinyin_initials, key_hangul_initials, key_phone_digits)
            VALUES (3, 1, 'Ann', '555', 1, 1, 'ann', 'a', '', '', '', '555'), (7, 1, 'Bo', NULL, 1, 1, 'bo', 'b', '', '', '', '');
            """)
        #expect(try Migrator.migrate(db, migrations: RosterSchema.migrations, now: 2) == ["0014_contact_cards", "0015_app_passwords"])
        let store = ContactStore(database: db)
        let card = try #require(try store.card(userID: 1, uid: "roster-contact-3"))
        #expect(card.contact.name == "Ann" && card.contact.revision == 3 && card.contact.etag == "r3")
        #expect(card.text == VCard.card(ContactDraft(name: "Ann", phone: "555"), uid: "roster-contact-3"))
        #expect(try store.card(userID: 1, uid: "roster-contact-7")?.contact.name == "Bo")
        guard case .changes(let all) = try store.changes(userID: 1, since: nil, limit: 10, now: 2) else {
            Issue.record("expired")
            return
        }
        #expect(all.changed.map(\.uid) == ["roster-contact-3", "roster-contact-7"] && all.revision == 7)
        let added = try store.insert(userID: 1, ContactDraft(name: "Cy"), keys: ContactSearchKeys(draft: ContactDraft(name: "Cy")),
                                     now: 3)
        #expect(added.contact.revision == 8)
    }
}
