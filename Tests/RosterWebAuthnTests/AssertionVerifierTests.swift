import RosterCrypto
import RosterProtocol
import Testing
@testable import RosterWebAuthn

/// Recorded assertions verify against their registration's key, and a mutated copy reaches each `why` an
/// assertion can give before storage is asked (the counter is storage's).
@Suite struct AssertionVerifierTests {
    private func verify(_ fixture: WebAuthnFixture, _ response: AssertionResponse? = nil,
                        challenge: [UInt8]? = nil, relyingParty: RelyingParty? = nil,
                        key: PasskeyPublicKey? = nil) throws -> VerifiedAssertion {
        let stored = try key ?? fixture.verifiedRegistration().publicKey
        return try AssertionVerifier.verify(try response ?? fixture.assertionResponse(),
                                            challenge: challenge ?? fixture.assertionChallenge,
                                            relyingParty: relyingParty ?? fixture.relyingParty, key: stored)
    }

    @Test(arguments: WebAuthnFixture.names)
    func aRecordedAssertionVerifiesWithItsRegistrationsKey(_ name: String) throws {
        let fixture = try WebAuthnFixture(name)
        let verified = try verify(fixture)
        #expect(verified.userVerified == !name.contains("up-only"))
        #expect((try fixture.assertionResponse()).rawID == (try fixture.verifiedRegistration()).credentialID)
    }

    @Test(arguments: WebAuthnFixture.names)
    func eachPartOfTheAssertionIsChecked(_ name: String) throws {
        let fixture = try WebAuthnFixture(name)
        let original = try fixture.assertionResponse()

        #expect(throws: PasskeyRejection.challenge) { try verify(fixture, challenge: fixture.registrationChallenge) }
        let elsewhere = RelyingParty(id: fixture.relyingParty.id, name: "Roster", origins: ["https://evil.example"])
        #expect(throws: PasskeyRejection.origin) { try verify(fixture, relyingParty: elsewhere) }
        let otherID = RelyingParty(id: "example.org", name: "Roster", origins: fixture.relyingParty.origins)
        #expect(throws: PasskeyRejection.rpID) { try verify(fixture, relyingParty: otherID) }

        var created = original
        created.clientDataJSON = original.clientDataJSON.replacingText("webauthn.get", with: "webauthn.create")
        #expect(throws: PasskeyRejection.type) { try verify(fixture, created) }

        var absent = original
        absent.authenticatorData = original.authenticatorData.changing(at: 32) { $0 & ~0x01 }
        #expect(throws: PasskeyRejection.userPresent) { try verify(fixture, absent) }

        var tampered = original
        tampered.signature = original.signature.changing(at: original.signature.count - 1) { $0 ^ 0x01 }
        #expect(throws: PasskeyRejection.signature) { try verify(fixture, tampered) }
        var empty = original
        empty.signature = []
        #expect(throws: PasskeyRejection.signature) { try verify(fixture, empty) }
        var counted = original
        counted.authenticatorData = original.authenticatorData.changing(at: 36) { $0 &+ 1 }
        #expect(throws: PasskeyRejection.signature) { try verify(fixture, counted) }
        var extended = original
        extended.clientDataJSON = original.clientDataJSON.replacingText("}", with: ",\"extra\":1}")
        #expect(throws: PasskeyRejection.signature) { try verify(fixture, extended) }

        var short = original
        short.authenticatorData = Array(original.authenticatorData.prefix(36))
        #expect(throws: PasskeyRejection.format) { try verify(fixture, short) }
    }

    @Test func anotherCredentialsKeyDoesNotVerify() throws {
        let chromium = try WebAuthnFixture("chromium-es256")
        let soft = try WebAuthnFixture("soft-es256-packed")
        #expect(throws: PasskeyRejection.signature) {
            try verify(chromium, key: try soft.verifiedRegistration().publicKey)
        }
        let eddsa = try WebAuthnFixture("soft-eddsa")
        #expect(throws: (any Error).self) { try verify(chromium, key: try eddsa.verifiedRegistration().publicKey) }
        #expect(throws: PasskeyRejection.format) {
            try verify(chromium, key: PasskeyPublicKey(algorithm: .es256, raw: [UInt8](repeating: 7, count: 64)))
        }
    }
}
