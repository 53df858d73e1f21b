import CFIDO2

/// A new credential that passed every check of WebAuthn §7.1: what rosterd stores for it.
public struct VerifiedRegistration: Equatable, Sendable {
    public var credentialID: [UInt8]
    public var publicKey: PasskeyPublicKey
    public var signCount: UInt32
    public var flags: AuthenticatorFlags
    /// The attestation format the authenticator used (`none` or `packed`).
    public var format: String
}

/// Checks a registration response against the challenge this relying party issued, with libfido2 reading the
/// attested credential data and COSE key and checking a packed statement's signature. Pure: same input, same
/// answer, no clock and no I/O.
public enum RegistrationVerifier {
    public static func verify(_ response: RegistrationResponse, challenge: [UInt8],
                              relyingParty: RelyingParty) throws(PasskeyRejection) -> VerifiedRegistration {
        let clientData = try ClientData(json: response.clientDataJSON)
        try clientData.check(ceremony: .create, challenge: challenge, relyingParty: relyingParty)
        let attestation = try AttestationObject(response.attestationObject)
        let head = try AuthenticatorData(attestation.authenticatorData)
        try head.check(relyingParty: relyingParty)
        guard head.flags.contains(.attestedCredentialData) else { throw .format }
        // libfido2 reads the COSE key and extensions with libcbor: their sizes are checked first (CBORBounds).
        let idLengthAt = AuthenticatorData.headLength + 16
        let data = attestation.authenticatorData
        guard data.count >= idLengthAt + 2 else { throw .format }
        let keyAt = idLengthAt + 2 + (Int(data[idLengthAt]) << 8 | Int(data[idLengthAt + 1]))
        guard keyAt <= data.count, CBORBounds.areItems(data[keyAt...]) else { throw .format }

        let credential = try FIDOCredential(authenticatorData: attestation.authenticatorData)
        guard credential.id == response.rawID else { throw .format }
        // A key libfido2 cannot load now could never verify an assertion later.
        guard credential.publicKey.withFIDOKey({ _ in true }) == true else { throw .format }
        switch attestation.format {
        case "none":
            guard attestation.statementIsEmpty else { throw .format }
        case "packed":
            guard attestation.statementAlgorithm == credential.publicKey.algorithm.rawValue else { throw .format }
            try credential.verifyPacked(statement: attestation.statement, clientDataJSON: response.clientDataJSON,
                                        relyingParty: relyingParty)
        default:
            throw .format
        }
        return VerifiedRegistration(credentialID: credential.id, publicKey: credential.publicKey,
                                    signCount: head.signCount, flags: head.flags, format: attestation.format)
    }
}

/// A libfido2 credential read from an authenticator data: its id and public key, and the statement check.
private final class FIDOCredential {
    private var handle: OpaquePointer?
    let id: [UInt8]
    let publicKey: PasskeyPublicKey

    /// Tries each algorithm Roster takes: libfido2 reads the COSE key only as the type it was told to expect.
    init(authenticatorData: [UInt8]) throws(PasskeyRejection) {
        FIDOLibrary.ready()
        for algorithm in PasskeyPublicKey.Algorithm.allCases {
            guard let cred = fido_cred_new() else { continue }
            if fido_cred_set_type(cred, Int32(algorithm.rawValue)) == FIDO_OK,
               fido_cred_set_authdata_raw(cred, authenticatorData, authenticatorData.count) == FIDO_OK,
               let idStart = fido_cred_id_ptr(cred), let keyStart = fido_cred_pubkey_ptr(cred) {
                handle = cred
                id = Array(UnsafeBufferPointer(start: idStart, count: fido_cred_id_len(cred)))
                publicKey = PasskeyPublicKey(
                    algorithm: algorithm,
                    raw: Array(UnsafeBufferPointer(start: keyStart, count: fido_cred_pubkey_len(cred))))
                return
            }
            var dropped: OpaquePointer? = cred
            fido_cred_free(&dropped)
        }
        throw .format
    }

    deinit { fido_cred_free(&handle) }

    /// A packed statement: self attestation (no `x5c`) is signed by the credential's own key; a full one by its
    /// certificate's, which is checked as a signature only, since Roster trusts no attestation roots.
    func verifyPacked(statement: [UInt8], clientDataJSON: [UInt8],
                      relyingParty: RelyingParty) throws(PasskeyRejection) {
        guard let handle, fido_cred_set_fmt(handle, "packed") == FIDO_OK,
              fido_cred_set_attstmt(handle, statement, statement.count) == FIDO_OK,
              fido_cred_set_clientdata(handle, clientDataJSON, clientDataJSON.count) == FIDO_OK,
              fido_cred_set_rp(handle, relyingParty.id, relyingParty.name) == FIDO_OK
        else { throw .format }
        let selfAttested = fido_cred_x5c_ptr(handle) == nil
        let status = selfAttested ? fido_cred_verify_self(handle) : fido_cred_verify(handle)
        switch status {
        case FIDO_OK: return
        case FIDO_ERR_INVALID_SIG: throw .signature
        default: throw .format
        }
    }
}
