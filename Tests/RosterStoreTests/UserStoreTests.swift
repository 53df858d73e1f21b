import Foundation
import Testing
import RosterStore

@Suite struct UserStoreTests {
    @Test func insertAndLookUp() throws {
        let dir = try TemporaryDirectory()
        let users = UserStore(database: try dir.rosterDatabase())
        #expect(try users.userCount() == 0)
        let alice = try users.insertUser(canonical: "alice1", display: "Alice1", email: "Alice@Example.com",
                                         passwordHash: placeholderHash, createdAt: 1_000)
        #expect(alice.id > 0)
        #expect(try users.user(canonical: "alice1") == alice)
        #expect(try users.user(canonical: "ALICE1") == alice)
        #expect(try users.user(email: "alice@example.COM") == alice)
        #expect(try users.user(id: alice.id) == alice)
        #expect(try users.user(canonical: "nobody") == nil)
        #expect(try users.user(email: "nobody@example.com") == nil)
        #expect(try users.user(id: 12345) == nil)
        #expect(try users.usernameExists("Alice1"))
        #expect(try !users.usernameExists("alice2"))
        #expect(try users.emailExists("ALICE@example.com"))
        #expect(try !users.emailExists("bob@example.com"))
        #expect(try users.userCount() == 1)
    }

    @Test func differentlyCasedNameIsTaken() throws {
        let dir = try TemporaryDirectory()
        let users = UserStore(database: try dir.rosterDatabase())
        _ = try users.insertUser(canonical: "Alice1", display: "Alice1", email: nil,
                                 passwordHash: placeholderHash, createdAt: 1)
        #expect(throws: UserStoreError.taken(.username)) {
            try users.insertUser(canonical: "alice1", display: "alice1", email: nil,
                                 passwordHash: placeholderHash, createdAt: 2)
        }
        #expect(try users.userCount() == 1)
    }

    @Test func emailClashIsReportedAsEmail() throws {
        let dir = try TemporaryDirectory()
        let users = UserStore(database: try dir.rosterDatabase())
        _ = try users.insertUser(canonical: "bobby1", display: "bobby1", email: "bob@example.com",
                                 passwordHash: placeholderHash, createdAt: 1)
        #expect(throws: UserStoreError.taken(.email)) {
            try users.insertUser(canonical: "robert", display: "robert", email: "BOB@example.com",
                                 passwordHash: placeholderHash, createdAt: 2)
        }
        // When both clash the username wins, as the register form checks it first.
        #expect(throws: UserStoreError.taken(.username)) {
            try users.insertUser(canonical: "BOBBY1", display: "BOBBY1", email: "bob@example.com",
                                 passwordHash: placeholderHash, createdAt: 3)
        }
        #expect(try users.userCount() == 1)
    }

    @Test func uniqueConstraintIsTheBackstop() throws {
        // Drive the schema directly, as a second writer that skipped the pre-check would.
        let dir = try TemporaryDirectory()
        let db = try dir.rosterDatabase()
        try db.execute("""
            INSERT INTO users(canonical, display, password_hash, created_at)
            VALUES ('zed001', 'zed001', '$argon2id$v=19$x', 1)
            """)
        do {
            try db.execute("""
                INSERT INTO users(canonical, display, password_hash, created_at)
                VALUES ('ZED001', 'ZED001', '$argon2id$v=19$x', 1)
                """)
            Issue.record("case-folded duplicate accepted")
        } catch {
            #expect(error.isConstraintUnique)
        }
    }

    @Test func accountsWithoutEmailDoNotClash() throws {
        let dir = try TemporaryDirectory()
        let users = UserStore(database: try dir.rosterDatabase())
        _ = try users.insertUser(canonical: "noemail1", display: "noemail1", email: nil,
                                 passwordHash: placeholderHash, createdAt: 1)
        _ = try users.insertUser(canonical: "noemail2", display: "noemail2", email: nil,
                                 passwordHash: placeholderHash, createdAt: 1)
        #expect(try users.userCount() == 2)
        #expect(try users.user(canonical: "noemail2")?.email == nil)
    }

    @Test func plaintextIsRefusedAsAHash() throws {
        let dir = try TemporaryDirectory()
        let users = UserStore(database: try dir.rosterDatabase())
        #expect(throws: UserStoreError.notArgon2idHash) {
            try users.insertUser(canonical: "henry1", display: "henry1", email: nil,
                                 passwordHash: "hunter2", createdAt: 1)
        }
        #expect(try users.userCount() == 0)
    }

    @Test func passwordHashUpdate() throws {
        let dir = try TemporaryDirectory()
        let users = UserStore(database: try dir.rosterDatabase())
        let ivy = try users.insertUser(canonical: "ivy001", display: "Ivy001", email: nil,
                                       passwordHash: placeholderHash, createdAt: 1)
        let newer = "$argon2id$v=19$m=19456,t=2,p=1$bmV3c2FsdA$bmV3aGFzaA"
        try users.updatePasswordHash(userID: ivy.id, hash: newer)
        #expect(try users.user(id: ivy.id)?.passwordHash == newer)
        #expect(throws: UserStoreError.notFound) { try users.updatePasswordHash(userID: 9999, hash: newer) }
        #expect(throws: UserStoreError.notArgon2idHash) { try users.updatePasswordHash(userID: ivy.id, hash: "x") }
    }

    @Test func writesSurviveReopen() throws {
        let dir = try TemporaryDirectory()
        do {
            let users = UserStore(database: try dir.rosterDatabase())
            _ = try users.insertUser(canonical: "jack01", display: "Jack01", email: "jack@example.com",
                                     passwordHash: placeholderHash, createdAt: 5)
            users.database.close()
        }
        let users = UserStore(database: try dir.rosterDatabase())
        #expect(try users.user(email: "JACK@example.com")?.display == "Jack01")
    }
}
