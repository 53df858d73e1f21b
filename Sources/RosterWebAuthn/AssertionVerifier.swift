import CFIDO2

/// An assertion that passed every check of WebAuthn §7.2 that needs no storage: the sign count it carries for
/// the stored one to be checked against, and whether the user was verified.
public struct VerifiedAssertion: Equatable, Sendable {
    public var signCount: UInt32
    public var flags: AuthenticatorFlags

    /// Whether the authenticator verified the user (a PIN, a fingerprint): a second factor of its own.
    public var userVerified: Bool { flags.contains(.userVerified) }
}

/// Checks an authentication response against the challenge this relying party issued and the stored key of
/// the credential it names, with libfido2 checking the signature. Pure: same input, same answer.
public enum AssertionVerifier {
    public static func verify(_ response: AssertionResponse, challenge: [UInt8], relyingParty: RelyingParty,
                              key: PasskeyPublicKey) throws(PasskeyRejection) -> VerifiedAssertion {
        let clientData = try ClientData(json: response.clientDataJSON)
        try clientData.check(ceremony: .get, challenge: challenge, relyingParty: relyingParty)
        let head = try AuthenticatorData(response.authenticatorData)
        try head.check(relyingParty: relyingParty)
        // Extensions, if any, are read by libcbor inside libfido2: their sizes are checked first (CBORBounds).
        guard CBORBounds.areItems(response.authenticatorData[AuthenticatorData.headLength...]) else { throw .format }
        try checkSignature(response, relyingParty: relyingParty, key: key)
        return VerifiedAssertion(signCount: head.signCount, flags: head.flags)
    }

    private static func checkSignature(_ response: AssertionResponse, relyingParty: RelyingParty,
                                       key: PasskeyPublicKey) throws(PasskeyRejection) {
        FIDOLibrary.ready()
        guard !response.signature.isEmpty else { throw .signature }
        var owned = fido_assert_new()
        defer { fido_assert_free(&owned) }
        guard let assertion = owned else { throw .format }
        let data = response.authenticatorData
        guard fido_assert_set_rp(assertion, relyingParty.id) == FIDO_OK,
              fido_assert_set_clientdata(assertion, response.clientDataJSON, response.clientDataJSON.count) == FIDO_OK,
              fido_assert_set_count(assertion, 1) == FIDO_OK,
              fido_assert_set_authdata_raw(assertion, 0, data, data.count) == FIDO_OK,
              fido_assert_set_sig(assertion, 0, response.signature, response.signature.count) == FIDO_OK,
              fido_assert_set_up(assertion, FIDO_OPT_TRUE) == FIDO_OK
        else { throw .format }
        let status = key.withFIDOKey { fido_assert_verify(assertion, 0, Int32(key.algorithm.rawValue), $0) }
        switch status {
        case FIDO_OK: return
        case FIDO_ERR_INVALID_SIG: throw .signature
        default: throw .format
        }
    }
}
