import Foundation
import Testing
import RosterStore

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

    @Test func dummyVerifyCostsAboutARealVerify() throws {
        let hasher = try fastHasher()
        let hash = try hasher.hash("timing")
        let clock = ContinuousClock()
        var real = Duration.seconds(3_600)
        var dummy = Duration.seconds(3_600)
        // Alternating rounds and keeping the fastest of each filters out load from parallel tests.
        for _ in 0..<5 {
            real = min(real, clock.measure { _ = hasher.verify("wrong", against: hash) })
            dummy = min(dummy, clock.measure { hasher.dummyVerify("wrong") })
        }
        // Only a dummy that skips Argon2 (or runs it twice) should fail these bounds.
        #expect(dummy > real / 3)
        #expect(dummy < real * 3)
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
