import CSodium
import Testing
@testable import RosterCrypto

@Suite struct RecoveryCodesTests {
    @Test func base32FollowsRFC4648WithoutPadding() {
        let vectors = ["": "", "f": "MY", "fo": "MZXQ", "foo": "MZXW6", "foob": "MZXW6YQ", "fooba": "MZXW6YTB",
                       "foobar": "MZXW6YTBOI"]
        for (plain, encoded) in vectors {
            #expect(Base32.encode(Array(plain.utf8)) == encoded)
            #expect(Base32.encode(Array(plain.utf8), lowercase: true) == encoded.lowercased())
        }
        #expect(Base32.encode([UInt8](repeating: 0xff, count: 10), lowercase: true) == "7777777777777777")
    }

    @Test func tenGroupedLowerCaseCodesWithTheirKeyedHashes() throws {
        let key = try SecretKey.random()
        let issued = try RecoveryCodes.generate(key: key)
        #expect(issued.codes.count == 10)
        #expect(Set(issued.codes).count == 10)
        #expect(issued.hashes.count == 10)
        for (code, hash) in zip(issued.codes, issued.hashes) {
            let groups = code.split(separator: "-", omittingEmptySubsequences: false)
            #expect(groups.count == 4)
            #expect(groups.allSatisfy { $0.utf8.count == 4 && $0.utf8.allSatisfy(Base32.isLowerDigit) })
            #expect(hash.count == 32)
            #expect(RecoveryCodes.hash(code, key: key) == hash)
        }
        #expect(!"\(issued)".contains(issued.codes[0]))
    }

    @Test func theHashIsKeyedBLAKE2bOfTheNormalizedCharacters() throws {
        let key = try #require(SecretKey(bytes: Array(repeating: 9, count: 32)))
        let code = "abcd-efgh-ijkl-mn23"
        var expected = [UInt8](repeating: 0, count: 32)
        let input = Array("abcdefghijklmn23".utf8)
        let keyBytes = [UInt8](repeating: 9, count: 32)
        crypto_generichash(&expected, 32, input, UInt64(input.count), keyBytes, 32)
        #expect(RecoveryCodes.hash(code, key: key) == expected)
        // Without the key the same code hashes to something else: a database copy cannot test guesses.
        #expect(RecoveryCodes.hash(code, key: try SecretKey.random()) != expected)
    }

    @Test func typedFormsNormalizeToOneCode() throws {
        let key = try SecretKey.random()
        let canonical = "abcd-efgh-ijkl-mn23"
        for typed in ["abcdefghijklmn23", "ABCD-EFGH-IJKL-MN23", " abcd efgh ijkl mn23 ", "ab-cd-ef-gh-ij-kl-mn-23",
                      "AbCd-eFgH-iJkL-Mn23"] {
            #expect(RecoveryCodes.normalize(typed) == "abcdefghijklmn23")
            #expect(RecoveryCodes.hash(typed, key: key) == RecoveryCodes.hash(canonical, key: key))
        }
    }

    @Test func whatCannotBeACodeIsNil() throws {
        let key = try SecretKey.random()
        for typed in ["", "----", "abcd-efgh-ijkl-mn2", "abcd-efgh-ijkl-mn234", "abcd-efgh-ijkl-mn01",
                      "abcd-efgh-ijkl-mn89", "abcd_efgh_ijkl_mn23", "abcd-efgh-ijkl-mn2\u{e9}", "abcd\tefgh-ijkl-mn23",
                      "ａbcd-efgh-ijkl-mn23", String(repeating: "a", count: 10_000)] {
            #expect(RecoveryCodes.normalize(typed) == nil, "\(typed.prefix(30))")
            #expect(RecoveryCodes.hash(typed, key: key) == nil)
        }
    }
}
