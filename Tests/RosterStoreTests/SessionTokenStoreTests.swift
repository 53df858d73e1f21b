import Foundation
import Testing
@testable import RosterCrypto
import RosterStore

@Suite struct SessionTokenStoreTests {
    private static let twelveHours: Int64 = 12 * 3_600 * 1_000

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

    @Test func insertResumeAndIdleExpiry() throws {
        let dir = try TemporaryDirectory()
        let (_, tokens, user) = try setUp(dir)
        let token = try SessionToken.generate()
        try tokens.insert(tokenHash: token.hash, userID: user.id, now: 1_000)

        // Each use restarts the idle clock.
        let later = 1_000 + Self.twelveHours - 1
        #expect(try tokens.resume(tokenHash: token.hash, now: later, idleLimitMs: Self.twelveHours) == user)
        let stillFine = later + Self.twelveHours - 1
        #expect(try tokens.resume(tokenHash: token.hash, now: stillFine, idleLimitMs: Self.twelveHours) == user)

        // Exactly the idle limit unused: expired, and deleted.
        let expired = stillFine + Self.twelveHours
        #expect(try tokens.resume(tokenHash: token.hash, now: expired, idleLimitMs: Self.twelveHours) == nil)
        #expect(try tokens.count() == 0)
    }

    @Test func lastUseNeverMovesBackwards() throws {
        let dir = try TemporaryDirectory()
        let (_, tokens, user) = try setUp(dir)
        let token = try SessionToken.generate()
        try tokens.insert(tokenHash: token.hash, userID: user.id, now: 10_000)
        #expect(try tokens.resume(tokenHash: token.hash, now: 5_000, idleLimitMs: 1_000) == user)
        let lastUsed = try tokens.database.pragmaValue("SELECT last_used_at FROM session_tokens")
        #expect(lastUsed == "10000")
    }

    @Test func unknownTokenResumesNobody() throws {
        let dir = try TemporaryDirectory()
        let (_, tokens, _) = try setUp(dir)
        let stranger = try SessionToken.generate()
        #expect(try tokens.resume(tokenHash: stranger.hash, now: 1, idleLimitMs: Self.twelveHours) == nil)
    }

    @Test func revoke() throws {
        let dir = try TemporaryDirectory()
        let (_, tokens, user) = try setUp(dir)
        let token = try SessionToken.generate()
        let other = try SessionToken.generate()
        try tokens.insert(tokenHash: token.hash, userID: user.id, now: 1)
        try tokens.insert(tokenHash: other.hash, userID: user.id, now: 1)
        #expect(try tokens.revoke(tokenHash: token.hash))
        #expect(try !tokens.revoke(tokenHash: token.hash))
        #expect(try tokens.resume(tokenHash: token.hash, now: 2, idleLimitMs: Self.twelveHours) == nil)
        #expect(try tokens.resume(tokenHash: other.hash, now: 2, idleLimitMs: Self.twelveHours) == user)
        #expect(try tokens.revokeAll(userID: user.id) == 1)
        #expect(try tokens.count() == 0)
    }

    @Test func purgeExpired() throws {
        let dir = try TemporaryDirectory()
        let (_, tokens, user) = try setUp(dir)
        let old = try SessionToken.generate()
        let fresh = try SessionToken.generate()
        try tokens.insert(tokenHash: old.hash, userID: user.id, now: 0)
        try tokens.insert(tokenHash: fresh.hash, userID: user.id, now: Self.twelveHours)
        #expect(try tokens.purgeExpired(now: Self.twelveHours, idleLimitMs: Self.twelveHours) == 1)
        #expect(try tokens.count() == 1)
        #expect(try tokens.resume(tokenHash: fresh.hash, now: Self.twelveHours + 1, idleLimitMs: Self.twelveHours) == user)
        // Absurd inputs clamp instead of trapping.
        #expect(try tokens.purgeExpired(now: Int64.min, idleLimitMs: Int64.max) == 0)
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
