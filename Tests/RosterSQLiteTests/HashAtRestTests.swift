import Foundation
import Testing
import RosterSQLite

@Suite struct HashAtRestTests {
    @Test func onlyTheArgon2idHashReachesTheDisk() throws {
        let dir = try TemporaryDirectory()
        let db = try dir.rosterDatabase()
        let users = UserStore(database: db)
        let hasher = try fastHasher()
        let password = "S3cret-plaintext-zz9"
        let user = try users.insertUser(canonical: "lena01", display: "Lena01", email: "lena@example.com",
                                        passwordHash: try hasher.hash(password), createdAt: 1)
        #expect(hasher.verify(password, against: user.passwordHash))

        // Read while the connection is open, so the WAL has not been checkpointed away.
        let main = dir.bytes("roster.db")
        let wal = dir.bytes("roster.db-wal")
        #expect(!wal.isEmpty)
        #expect(!main.contains(utf8: password))
        #expect(!wal.contains(utf8: password))
        #expect((main + wal).contains(utf8: "$argon2id$"))
        #expect((main + wal).contains(utf8: user.passwordHash))

        db.close()
        let checkpointed = dir.bytes("roster.db") + dir.bytes("roster.db-wal")
        #expect(!checkpointed.contains(utf8: password))
        #expect(checkpointed.contains(utf8: user.passwordHash))
    }
}
