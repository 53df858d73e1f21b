import Testing
@testable import RosterCrypto

@Suite struct SecretBoxTests {
    @Test func sealsAndOpensWithAFreshNonceFirst() throws {
        let key = try SecretKey.random()
        let secret: [UInt8] = Array(0..<20)
        let sealed = try SecretBox.seal(secret, key: key)
        #expect(sealed.count == 24 + 16 + 20)
        #expect(SecretBox.open(sealed, key: key) == secret)
        let again = try SecretBox.seal(secret, key: key)
        #expect(again.prefix(24) != sealed.prefix(24))
        #expect(again != sealed)
        #expect(SecretBox.open(again, key: key) == secret)
        #expect(SecretBox.open(try SecretBox.seal([], key: key), key: key) == [])
    }

    @Test func opensNothingTamperedShortOrUnderAnotherKey() throws {
        let key = try SecretKey.random()
        let sealed = try SecretBox.seal(Array("twenty bytes secret!".utf8), key: key)
        for index in sealed.indices {
            var tampered = sealed
            tampered[index] ^= 0x01
            #expect(SecretBox.open(tampered, key: key) == nil)
        }
        for length in 0..<40 {
            #expect(SecretBox.open(Array(sealed.prefix(length)), key: key) == nil)
        }
        #expect(SecretBox.open(sealed + [0], key: key) == nil)
        #expect(SecretBox.open(sealed, key: try SecretKey.random()) == nil)
    }
}
