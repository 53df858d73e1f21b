/// A libsodium failure. Never carries the password or token involved.
public enum CryptoError: Error, Equatable, Sendable, CustomStringConvertible {
    /// sodium_init failed, so no randomness or hashing is available.
    case sodiumUnavailable
    /// Argon2id parameters outside libsodium's limits.
    case invalidParameters
    /// Argon2id could not run (in practice: the memory cost could not be allocated).
    case hashingFailed

    public var description: String {
        switch self {
        case .sodiumUnavailable: return "crypto: libsodium could not be initialised"
        case .invalidParameters: return "crypto: Argon2id parameters are out of range"
        case .hashingFailed: return "crypto: Argon2id hashing failed (out of memory?)"
        }
    }
}
