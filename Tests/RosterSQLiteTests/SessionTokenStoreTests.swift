import Foundation
import Testing
@testable import RosterCrypto
import RosterSQLite

/// What `SessionTokenStore` does in SQL, and the tokens themselves. Resuming, idle expiry and revoking behind the
/// storage boundary are the storage contract's, in `SessionTokenContractTests`.
@Suite struct SessionTokenStoreTests {
    private func setUp(_ dir: TemporaryDirectory) throws -> (UserStore, SessionTokenStore, UserRecord) {
        let db = try dir.rosterDatabase()
        let users = UserStore(database: db)
        let user = try users.insertUser(canonical: "kate01", display: "Kate01", email: nil,
                                        passwordHash: placeholderHash, createdAt: 0)
        return (users, SessionTokenStore(database: db), user)
    }

    @Test func generatedTokensAreRandomAndHashable() throws {
        let a = try SessionToken.generate()
        let b = try SessionToken.generate()
        #expect(a.bearer.utf8.count == SessionToken.bearerLength)
        #expect(a.hash.count == SessionToken.hashLength)
        #expect(a.bearer != b.bearer)
        #expect(a.hash != b.hash)
        #expect(SessionToken.hash(bearer: a.bearer) == a.hash)
        #expect(SessionToken.hash(bearer: "short") == nil)
        #expect(SessionToken.hash(bearer: String(repeating: "=", count: 43)) == nil)
        #expect(!"\(a)".contains(a.bearer))
    }

    @Test func revokingEveryTokenOfAUser() throws {
        let dir = try TemporaryDirectory()
        let (_, tokens, user) = try setUp(dir)
        try tokens.insert(tokenHash: try SessionToken.generate().hash, userID: user.id, now: 1)
        try tokens.insert(tokenHash: try SessionToken.generate().hash, userID: user.id, now: 1)
        #expect(try tokens.revokeAll(userID: user.id) == 2)
        #expect(try tokens.count() == 0)
    }

    @Test func absurdPurgeInputsClampInsteadOfTrapping() throws {
        let dir = try TemporaryDirectory()
        let (_, tokens, user) = try setUp(dir)
        try tokens.insert(tokenHash: try SessionToken.generate().hash, userID: user.id, now: 0)
        #expect(try tokens.purgeExpired(now: Int64.min, idleLimitMs: Int64.max) == 0)
        #expect(try tokens.count() == 1)
    }

    @Test func onlyTheHashIsStored() throws {
        let dir = try TemporaryDirectory()
        let (_, tokens, user) = try setUp(dir)
        let token = try SessionToken.generate()
        try tokens.insert(tokenHash: token.hash, userID: user.id, now: 1)

        let stored = try tokens.database.prepare("SELECT token_hash FROM session_tokens")
        #expect(try stored.step())
        #expect(stored.blob(at: 0) == token.hash)
        stored.reset()

        let onDisk = dir.bytes("roster.db") + dir.bytes("roster.db-wal")
        #expect(!onDisk.contains(utf8: token.bearer))
        #expect(onDisk.contains(bytes: token.hash))
    }

    @Test func tokenHashMustBe32Bytes() throws {
        let dir = try TemporaryDirectory()
        let (_, tokens, user) = try setUp(dir)
        #expect(throws: StoreError.self) { try tokens.insert(tokenHash: [1, 2, 3], userID: user.id, now: 1) }
    }
}
