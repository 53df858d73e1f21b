import Testing
@testable import RosterCrypto

@Suite struct TOTPTests {
    @Test func generatesRFC6238Codes() {
        // RFC 6238 appendix B (SHA-1), the last six of its eight digits.
        let secret = Array("12345678901234567890".utf8)
        #expect(TOTP.generate(secret: secret, nowUnix: 59) == "287082")
        #expect(TOTP.generate(secret: secret, nowUnix: 1_111_111_109) == "081804")
        #expect(TOTP.generate(secret: secret, nowUnix: 2_000_000_000) == "279037")
    }

    @Test func acceptsOneStepEitherSideAgainstOathtoolAndReturnsTheMatchedStep() throws {
        let secret = try TOTP.generateSecret()
        #expect(secret.count == 20)
        let encoded = TOTP.base32(secret)
        let now: Int64 = 1_764_600_015 // inside its step, so ±30 s lands one step away
        let step = now / 30
        for offset in -2...2 {
            let code = try oathtool(["--totp", "-b", encoded, "-N", "@\(now + Int64(offset) * 30)"])
            #expect(code.utf8.count == 6)
            #expect(TOTP.generate(secret: secret, nowUnix: now + Int64(offset) * 30) == code)
            let expected: Int64? = abs(offset) <= 1 ? step + Int64(offset) : nil
            #expect(TOTP.validate(code, secret: secret, nowUnix: now) == expected, "offset \(offset)")
        }
        // The step boundary: the last second of a step still accepts the next step's code, one more does not.
        let next = try oathtool(["--totp", "-b", encoded, "-N", "@\((step + 2) * 30)"])
        #expect(TOTP.validate(next, secret: secret, nowUnix: step * 30 + 29) == nil)
        #expect(TOTP.validate(next, secret: secret, nowUnix: (step + 1) * 30) == step + 2)
    }

    @Test func refusesWhatIsNotSixDigits() throws {
        let secret = try TOTP.generateSecret()
        let now: Int64 = 1_764_600_015
        let code = try #require(TOTP.generate(secret: secret, nowUnix: now))
        #expect(TOTP.validate(code, secret: secret, nowUnix: now) == now / 30)
        for typed in ["", String(code.dropLast()), code + "0", " " + code, code + "\n", "12345a", "１２３４５６"] {
            #expect(TOTP.validate(typed, secret: secret, nowUnix: now) == nil, "\(typed)")
        }
        #expect(TOTP.validate(code, secret: try TOTP.generateSecret(), nowUnix: now) == nil)
        #expect(TOTP.validate(code, secret: secret, nowUnix: now, window: 0) == now / 30)
    }

    @Test func secretsAreRandomAndBase32IsUpperCaseUnpadded() throws {
        let first = try TOTP.generateSecret()
        #expect(first != (try TOTP.generateSecret()))
        let encoded = TOTP.base32(first)
        #expect(encoded.utf8.count == 32)
        #expect(encoded.utf8.allSatisfy { Base32.isLowerDigit($0 | 0x20) && !(97...122).contains($0) })
    }

    @Test func theURIPercentEncodesTheNameAsUTF8() {
        let secret = Array("12345678901234567890".utf8)
        let tail = "?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Roster&algorithm=SHA1&digits=6&period=30"
        #expect(TOTP.uri(secret: secret, username: "alice") == "otpauth://totp/Roster:alice" + tail)
        #expect(TOTP.uri(secret: secret, username: "김민수") == "otpauth://totp/Roster:%EA%B9%80%EB%AF%BC%EC%88%98" + tail)
        #expect(TOTP.uri(secret: secret, username: "张三") == "otpauth://totp/Roster:%E5%BC%A0%E4%B8%89" + tail)
        #expect(TOTP.uri(secret: secret, username: "a b:c/d?e&f") == "otpauth://totp/Roster:a%20b%3Ac%2Fd%3Fe%26f" + tail)
        #expect(TOTP.uri(secret: secret, username: "x.y_z-1~") == "otpauth://totp/Roster:x.y_z-1~" + tail)
    }

    @Test func aSealedSecretIsCheckedWithoutLeavingTheModule() throws {
        let key = try SecretKey.random()
        let secret = try TOTP.generateSecret()
        let sealed = try SecretBox.seal(secret, key: key)
        let now: Int64 = 1_764_600_015
        let code = try oathtool(["--totp", "-b", TOTP.base32(secret), "-N", "@\(now - 30)"])
        #expect(TOTP.validate(code, sealed: sealed, key: key, nowUnix: now) == .matched(step: now / 30 - 1))
        let old = try oathtool(["--totp", "-b", TOTP.base32(secret), "-N", "@\(now - 60)"])
        #expect(TOTP.validate(old, sealed: sealed, key: key, nowUnix: now) == .mismatch)
        #expect(TOTP.validate(code, sealed: sealed, key: try SecretKey.random(), nowUnix: now) == .unopenable)
        #expect(TOTP.validate(code, sealed: Array(sealed.dropLast()), key: key, nowUnix: now) == .unopenable)
    }
}
