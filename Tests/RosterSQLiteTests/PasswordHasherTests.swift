import Foundation
import Testing
@testable import RosterCrypto
@testable import RosterSQLite

@Suite struct PasswordHasherTests {
    @Test func hashAndVerify() throws {
        let hasher = try fastHasher()
        let hash = try hasher.hash("correct horse")
        #expect(hash.hasPrefix("$argon2id$v=19$m=8192,t=1,p=1$"))
        #expect(!hash.contains("correct horse"))
        #expect(hasher.verify("correct horse", against: hash))
        #expect(!hasher.verify("correct horsE", against: hash))
        #expect(!hasher.verify("", against: hash))
        #expect(!hasher.verify("correct horse", against: "garbage"))
        // A fresh salt each time.
        #expect(try hasher.hash("correct horse") != hash)
    }

    @Test func unicodeAndEmptyPasswords() throws {
        let hasher = try fastHasher()
        let unicode = try hasher.hash("Mật khẩu 비밀번호 密码")
        #expect(hasher.verify("Mật khẩu 비밀번호 密码", against: unicode))
        let empty = try hasher.hash("")
        #expect(hasher.verify("", against: empty))
        #expect(!hasher.verify(" ", against: empty))
    }

    @Test func needsRehashWhenParametersChange() throws {
        let hasher = try fastHasher()
        let hash = try hasher.hash("rehash-me")
        #expect(!hasher.needsRehash(hash))
        #expect(try PasswordHasher(memoryKiB: 16_384, iterations: 1).needsRehash(hash))
        #expect(try PasswordHasher(memoryKiB: 8_192, iterations: 2).needsRehash(hash))
        #expect(hasher.needsRehash("not a hash"))
        #expect(hasher.needsRehash("$argon2i$v=19$m=8192,t=1,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA"))
        // A hash with other parameters still verifies; upgrading is the caller's choice.
        let stronger = try PasswordHasher(memoryKiB: 16_384, iterations: 1)
        #expect(stronger.verify("rehash-me", against: hash))
    }

    /// Equal cost is structural, not timed (timing belongs in the benchmark): the dummy is a real Argon2id hash
    /// made with this hasher's own parameters, so verifying against it runs the same work as a real verify.
    @Test func dummyVerifyRunsArgon2idAtTheHashersOwnCost() throws {
        let hasher = try fastHasher()
        #expect(hasher.dummyHash.hasPrefix("$argon2id$v=19$m=\(hasher.memoryKiB),t=\(hasher.iterations),p=1$"))
        #expect(!hasher.needsRehash(hasher.dummyHash))
        hasher.dummyVerify("anything")
    }

    @Test func outOfRangeParametersAreRefused() {
        #expect(throws: CryptoError.invalidParameters) { try PasswordHasher(memoryKiB: 1, iterations: 1) }
        #expect(throws: CryptoError.invalidParameters) { try PasswordHasher(memoryKiB: 8_192, iterations: 0) }
        #expect(throws: CryptoError.invalidParameters) { try PasswordHasher(memoryKiB: Int.max, iterations: 1) }
    }

    @Test func defaultsAreOWASPArgon2id() throws {
        let hasher = try PasswordHasher()
        #expect(hasher.memoryKiB == 19_456)
        #expect(hasher.iterations == 2)
        let hash = try hasher.hash("default-cost")
        #expect(hash.hasPrefix("$argon2id$v=19$m=19456,t=2,p=1$"))
        #expect(hasher.verify("default-cost", against: hash))
        #expect(!hasher.needsRehash(hash))
    }
}
