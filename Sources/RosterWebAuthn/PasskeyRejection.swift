/// Why a passkey ceremony's response was refused: `passkey_rejected`'s stable `why` (protocol.md "Passkeys").
public enum PasskeyRejection: String, Error, Equatable, Sendable, CaseIterable {
    /// The challenge is not the one this connection was given, was used, or expired.
    case challenge
    /// clientDataJSON's origin is not one of `[WebAuthn] Origins=` (or the call was cross-origin).
    case origin
    /// The authenticator data is for another relying party.
    case rpID = "rp_id"
    /// clientDataJSON's type is not the ceremony's, or the credential is not a `public-key`.
    case type
    /// The authenticator did not report the user present.
    case userPresent = "user_present"
    /// The signature (attestation or assertion) does not verify.
    case signature
    /// The response cannot be read: not base64url, not CBOR, an attestation format or key type Roster does not take.
    case format
    /// The credential is already registered.
    case duplicate
    /// The sign count did not move forward: a cloned authenticator, or a replayed assertion.
    case counter
}
