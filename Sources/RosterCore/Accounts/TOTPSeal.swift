/// An account's confirmed TOTP secret as the storage keeps it: sealed (libsodium `crypto_secretbox`, nonce first)
/// under the daemon's key file, and the last time step a log-in accepted, so that no code is accepted twice.
/// Core never opens it: the runtime does, on the effect that verifies a code.
public struct TOTPSeal: Equatable, Sendable {
    /// `nonce ‖ ciphertext` of the raw RFC 6238 secret.
    public var sealed: [UInt8]
    /// The last 30 s step (Unix seconds / 30) a code was accepted for; nil before the first.
    public var lastStep: Int64?

    public init(sealed: [UInt8], lastStep: Int64?) {
        self.sealed = sealed
        self.lastStep = lastStep
    }
}
