import Foundation
import Testing
import RosterSQLite

/// What `UserStore` does in SQL. Its behaviour behind the storage boundary (uniqueness without regard to case,
/// clashes by field, hashes, durability) is the storage contract's, in `AccountContractTests`.
@Suite struct UserStoreTests {
    @Test func anAccountIsFoundByItsID() throws {
        let dir = try TemporaryDirectory()
        let users = UserStore(database: try dir.rosterDatabase())
        let alice = try users.insertUser(canonical: "alice1", display: "Alice1", email: "Alice@Example.com",
                                         passwordHash: placeholderHash, createdAt: 1_000)
        #expect(alice.id > 0)
        #expect(try users.user(id: alice.id) == alice)
        #expect(try users.user(id: 12345) == nil)
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
}
