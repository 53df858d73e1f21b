import CSodium
import Testing
@testable import RosterCrypto

@Suite struct MailCodesTests {
    private func bytes(_ key: SecretKey) -> [UInt8] {
        key.withBytes { Array(UnsafeBufferPointer(start: $0, count: SecretKey.length)) }
    }

    @Test func aCodeIsSixDigitsWithItsLeadingZeros() throws {
        #expect(MailCodes.padded(0) == "000000")
        #expect(MailCodes.padded(7) == "000007")
        #expect(MailCodes.padded(40_200) == "040200")
        #expect(MailCodes.padded(999_999) == "999999")
        for _ in 0..<1_000 {
            let code = try MailCodes.generate()
            #expect(code.utf8.count == 6 && code.utf8.allSatisfy { (0x30...0x39).contains($0) }, "\(code)")
        }
    }

    /// Every digit in every place about equally often: 20,000 draws give each digit 2,000 times ± 300 in each
    /// place, seven standard deviations, so a fair generator fails here about never, and a biased one (a modulo
    /// of a byte, a missing leading zero) at once.
    @Test func everyDigitComesAboutEquallyOftenInEveryPlace() throws {
        var counts = [[Int]](repeating: [Int](repeating: 0, count: 10), count: 6)
        for _ in 0..<20_000 {
            for (place, byte) in try MailCodes.generate().utf8.enumerated() { counts[place][Int(byte - 0x30)] += 1 }
        }
        for (place, digits) in counts.enumerated() {
            #expect(digits.allSatisfy { (1_700...2_300).contains($0) }, "place \(place): \(digits)")
        }
    }

    @Test func aTypedCodeIsItsSixDigitsWithBlanksAndDashesDropped() {
        #expect(MailCodes.normalize("123456") == "123456")
        #expect(MailCodes.normalize(" 123 456 ") == "123456")
        #expect(MailCodes.normalize("123-456") == "123456")
        for bad in ["", "12345", "1234567", "12a456", "１２３４５６", "123_456", "12345\u{0}6", "000000000000"] {
            #expect(MailCodes.normalize(bad) == nil, "\(bad.debugDescription)")
        }
    }

    @Test func theHashIsKeyedBLAKE2bOfTheSixDigits() throws {
        let key = try #require(SecretKey(bytes: Array(repeating: 9, count: 32)))
        var expected = [UInt8](repeating: 0, count: 32)
        let input = Array("042917".utf8)
        let keyBytes = [UInt8](repeating: 9, count: 32)
        crypto_generichash(&expected, 32, input, UInt64(input.count), keyBytes, 32)
        #expect(MailCodes.hash("042 917", key: key) == expected)
        #expect(MailCodes.hash("042-917", key: key) == expected)
        #expect(MailCodes.hash("42917", key: key) == nil)
        let other = try #require(SecretKey(bytes: Array(repeating: 8, count: 32)))
        #expect(MailCodes.hash("042917", key: other) != expected)
    }

    /// Each kind of code has its own subkey of the key file, so the same input under one never hashes as under
    /// the other, and a hash of one kind can never stand for the other.
    @Test func aMailedCodesHashIsNeverARecoveryCodesHash() throws {
        let secrets = AccountSecrets(master: try #require(SecretKey(bytes: Array(0..<32))))
        #expect(bytes(secrets.mailCodes) != bytes(secrets.recoveryCodes))
        #expect(bytes(secrets.mailSeal) != bytes(secrets.totpSeal))
        let input = Array("123456".utf8)
        func keyed(_ key: SecretKey) -> [UInt8] {
            var out = [UInt8](repeating: 0, count: 32)
            key.withBytes { _ = crypto_generichash(&out, 32, input, UInt64(input.count), $0, 32) }
            return out
        }
        #expect(MailCodes.hash("123456", key: secrets.mailCodes) == keyed(secrets.mailCodes))
        #expect(MailCodes.hash("123456", key: secrets.mailCodes) != keyed(secrets.recoveryCodes))
        // What a mail is sealed with does not open a TOTP secret, nor the other way round.
        let sealed = try SecretBox.seal(Array("a mail".utf8), key: secrets.mailSeal)
        #expect(SecretBox.open(sealed, key: secrets.mailSeal) == Array("a mail".utf8))
        #expect(SecretBox.open(sealed, key: secrets.totpSeal) == nil)
    }

    @Test func randomBytesAreFreshEachTime() throws {
        let first = try RandomBytes.make(count: 16)
        #expect(first.count == 16)
        #expect(try RandomBytes.make(count: 16) != first)
        #expect(try RandomBytes.make(count: 0).isEmpty)
    }
}
