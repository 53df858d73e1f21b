import RosterCrypto
import RosterProtocol
import Testing
@testable import RosterWebAuthn

/// Recorded registrations (Chromium's virtual authenticator, the test's software authenticator) verify, and a
/// mutated copy reaches each `why` the registration can give.
@Suite struct RegistrationVerifierTests {
    @Test(arguments: WebAuthnFixture.names)
    func aRecordedRegistrationVerifies(_ name: String) throws {
        let fixture = try WebAuthnFixture(name)
        let verified = try fixture.verifiedRegistration()
        #expect(verified.credentialID == (try fixture.registrationResponse()).rawID)
        #expect(verified.publicKey.raw.count == verified.publicKey.algorithm.keyLength)
        #expect(verified.flags.contains(.userPresent))
        #expect(name.contains("packed") ? verified.format == "packed" : verified.format == "none")
        #expect(name.contains("eddsa") ? verified.publicKey.algorithm == .eddsa : verified.publicKey.algorithm == .es256)
        #expect(verified.flags.contains(.userVerified) == !name.contains("up-only"))
    }

    @Test(arguments: WebAuthnFixture.names)
    func anotherChallengeIsRefused(_ name: String) throws {
        let fixture = try WebAuthnFixture(name)
        var other = fixture.registrationChallenge
        other[0] ^= 1
        #expect(throws: PasskeyRejection.challenge) {
            try RegistrationVerifier.verify(try fixture.registrationResponse(), challenge: other,
                                            relyingParty: fixture.relyingParty)
        }
        #expect(throws: PasskeyRejection.challenge) {
            try RegistrationVerifier.verify(try fixture.registrationResponse(), challenge: [],
                                            relyingParty: fixture.relyingParty)
        }
    }

    @Test(arguments: WebAuthnFixture.names)
    func anOriginNotConfiguredIsRefused(_ name: String) throws {
        let fixture = try WebAuthnFixture(name)
        let elsewhere = RelyingParty(id: fixture.relyingParty.id, name: "Roster", origins: ["http://localhost:9"])
        #expect(throws: PasskeyRejection.origin) {
            try RegistrationVerifier.verify(try fixture.registrationResponse(), challenge: fixture.registrationChallenge,
                                            relyingParty: elsewhere)
        }
    }

    @Test(arguments: WebAuthnFixture.names)
    func anotherRelyingPartysCredentialIsRefused(_ name: String) throws {
        let fixture = try WebAuthnFixture(name)
        let other = RelyingParty(id: "example.org", name: "Roster", origins: fixture.relyingParty.origins)
        #expect(throws: PasskeyRejection.rpID) {
            try RegistrationVerifier.verify(try fixture.registrationResponse(), challenge: fixture.registrationChallenge,
                                            relyingParty: other)
        }
    }

    @Test(arguments: WebAuthnFixture.names)
    func anAssertionsClientDataIsTheWrongType(_ name: String) throws {
        let fixture = try WebAuthnFixture(name)
        var response = try fixture.registrationResponse()
        response.clientDataJSON = response.clientDataJSON.replacingText("webauthn.create", with: "webauthn.get")
        #expect(throws: PasskeyRejection.type) {
            try RegistrationVerifier.verify(response, challenge: fixture.registrationChallenge,
                                            relyingParty: fixture.relyingParty)
        }
    }

    @Test(arguments: WebAuthnFixture.names)
    func withoutTheUserPresentFlagItIsRefused(_ name: String) throws {
        let fixture = try WebAuthnFixture(name)
        var response = try fixture.registrationResponse()
        let flags = try #require(response.attestationObject.index(after: fixture.relyingParty.idHash))
        response.attestationObject = response.attestationObject.changing(at: flags) { $0 & ~0x01 }
        #expect(throws: PasskeyRejection.userPresent) {
            try RegistrationVerifier.verify(response, challenge: fixture.registrationChallenge,
                                            relyingParty: fixture.relyingParty)
        }
    }

    @Test func aPackedStatementOverOtherClientDataIsABadSignature() throws {
        let fixture = try WebAuthnFixture("soft-es256-packed")
        var response = try fixture.registrationResponse()
        response.clientDataJSON = response.clientDataJSON.replacingText("}", with: ",\"extra\":1}")
        #expect(throws: PasskeyRejection.signature) {
            try RegistrationVerifier.verify(response, challenge: fixture.registrationChallenge,
                                            relyingParty: fixture.relyingParty)
        }
    }

    @Test(arguments: WebAuthnFixture.names)
    func whatCannotBeReadIsAFormatError(_ name: String) throws {
        let fixture = try WebAuthnFixture(name)
        let original = try fixture.registrationResponse()
        var cut = original
        cut.attestationObject.removeLast()
        var trailing = original
        trailing.attestationObject.append(0)
        var otherID = original
        otherID.rawID[0] ^= 1
        var notJSON = original
        notJSON.clientDataJSON = Array("not json".utf8)
        // "none" becomes "tpm" in place (both are text strings; libfido2 reads no statement for either).
        var tpm = original
        if let at = original.attestationObject.index(after: Array("fmt".utf8)) {
            let replacement: [UInt8] = original.attestationObject[at] == 0x64 ? Array("\u{63}tpm".utf8) : []
            if !replacement.isEmpty {
                tpm.attestationObject.replaceSubrange(at..<(at + 5), with: replacement)
            }
        }
        for bad in [cut, trailing, otherID, notJSON, tpm] where bad != original {
            #expect(throws: PasskeyRejection.format) {
                try RegistrationVerifier.verify(bad, challenge: fixture.registrationChallenge,
                                                relyingParty: fixture.relyingParty)
            }
        }
    }

    @Test func theShapeErrorNamesTheMember() throws {
        let fixture = try WebAuthnFixture("chromium-es256")
        guard case .object(var members) = fixture.registration else { Issue.record("not an object"); return }
        members.removeAll { $0.0 == "rawId" }
        #expect(throws: CredentialShapeError(member: "rawId")) { try RegistrationResponse(json: .object(members)) }
        #expect(throws: CredentialShapeError(member: "credential")) { try RegistrationResponse(json: .string("x")) }
        let padded = JSONValue.object([("id", .string("AA==")), ("rawId", .string("AA==")),
                                       ("type", .string("public-key")), ("response", .object([]))])
        #expect(throws: CredentialShapeError(member: "rawId")) { try RegistrationResponse(json: padded) }
    }
}
