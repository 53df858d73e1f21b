import Testing
@testable import RosterCrypto

@Suite struct AppPasswordsTests {
    @Test func aSecretIsTwentyFourBase32CharactersHashedUnderItsKey() throws {
        let key = try SecretKey.random()
        var secrets = Set<String>()
        var ids = Set<String>()
        for _ in 0..<500 {
            let issued = try AppPasswords.generate(key: key)
            #expect(issued.secret.utf8.count == 24 && issued.secret.utf8.allSatisfy(Base32.isLowerDigit))
            #expect(issued.id.utf8.count == 16 && issued.id.utf8.allSatisfy(Base32.isLowerDigit))
            #expect(AppPasswords.hash(issued.secret, key: key) == issued.hash && issued.hash.count == 32)
            #expect(!"\(issued)".contains(issued.secret), "the description redacts the secret")
            secrets.insert(issued.secret)
            ids.insert(issued.id)
        }
        #expect(secrets.count == 500 && ids.count == 500)
    }

    @Test func aSecretIsReadAsTypedAndNothingElseIsHashed() throws {
        let key = try SecretKey.random()
        let secret = "abcdefghijklmnopqrstuvwx"
        let hash = try #require(AppPasswords.hash(secret, key: key))
        for typed in ["ABCDEFGHIJKLMNOPQRSTUVWX", "abcd-efgh-ijkl-mnop-qrst-uvwx", "abcd efgh ijkl mnop qrst uvwx"] {
            #expect(AppPasswords.hash(typed, key: key) == hash, "\(typed)")
        }
        for typed in ["", "abcdefghijklmnopqrstuvw", "abcdefghijklmnopqrstuvwxy", "abcdefghijklmnopqrstuvw1",
                      "correct horse battery staple", "abcdefghijklmnopqrstuvwé"] {
            #expect(AppPasswords.hash(typed, key: key) == nil, "\(typed)")
        }
        #expect(AppPasswords.hash(secret, key: try SecretKey.random()) != hash, "another key, another hash")
        #expect(AppPasswords.same(hash, hash) && !AppPasswords.same(hash, Array(hash.reversed())))
        #expect(!AppPasswords.same(hash, Array(hash.dropLast())) && !AppPasswords.same([], []))
    }

    @Test func aContactsOnlyTokenCarriesItsPrefixInsideItsHash() throws {
        let token = try SessionToken.generate(contactsOnly: true)
        #expect(token.bearer.hasPrefix("dav.") && token.bearer.utf8.count == 47)
        #expect(SessionToken.isContactsOnly(bearer: token.bearer))
        #expect(SessionToken.hash(bearer: token.bearer) == token.hash)
        let bare = String(token.bearer.dropFirst(4))
        #expect(!SessionToken.isContactsOnly(bearer: bare))
        #expect(SessionToken.hash(bearer: bare) != token.hash, "without its prefix it is another token")
        #expect(SessionToken.hash(bearer: "dav." + bare.dropLast()) == nil)
        #expect(SessionToken.hash(bearer: "dav.dav." + bare) == nil)
        let full = try SessionToken.generate()
        #expect(!SessionToken.isContactsOnly(bearer: full.bearer) && full.bearer.utf8.count == 43)
        #expect(SessionToken.hash(bearer: full.bearer) == full.hash)
    }
}
