import CSodium

/// App passwords: 24 random lower-case base32 characters (120 bits) a CardDAV client logs in with, stored only as
/// a keyed hash, each under a random id.
///
/// Why a fast keyed hash (BLAKE2b-256 keyed with the `.appPasswords` subkey of the key file) and not Argon2id: a
/// secret of 120 random bits cannot be guessed offline whatever the hash costs, online guesses are held back by
/// the failed-log-in limiter, and a DAV client logs in on every sync, which a slow hash would make a worker-pool
/// trip each time. The key keeps a copy of the database alone from testing a guess. A match is compared in
/// constant time (`sodium_memcmp`).
public enum AppPasswords {
    /// Random bytes per secret (120 bits, exactly 24 base32 characters).
    public static let byteLength = 15
    /// Base32 characters per secret.
    public static let characters = 24
    /// Random bytes per id (16 base32 characters).
    public static let idByteLength = 10
    /// Length of a stored hash.
    public static let hashLength = KeyedHash.length

    /// A fresh secret as shown once, with its hash to store and a fresh id.
    public struct Issued: Sendable, CustomStringConvertible {
        public let id: String
        /// What the user types into the DAV client; never stored, never logged.
        public let secret: String
        public let hash: [UInt8]

        // Keeps the secret out of any log line that interpolates the value.
        public var description: String { "AppPasswords.Issued(\(id), redacted)" }
    }

    /// A new secret and id from libsodium's CSPRNG, and the secret's hash under `key` (the `.appPasswords` subkey).
    public static func generate(key: SecretKey) throws(CryptoError) -> Issued {
        guard Sodium.isReady else { throw .sodiumUnavailable }
        var raw = [UInt8](repeating: 0, count: byteLength)
        randombytes_buf(&raw, raw.count)
        defer { sodium_memzero(&raw, raw.count) }
        var idRaw = [UInt8](repeating: 0, count: idByteLength)
        randombytes_buf(&idRaw, idRaw.count)
        let secret = Base32.encode(raw, lowercase: true)
        return Issued(id: Base32.encode(idRaw, lowercase: true), secret: secret, hash: KeyedHash.of(secret, key: key))
    }

    /// The secret as typed, reduced to its 24 base32 characters (blanks and dashes dropped, lower-cased); nil when
    /// what remains cannot be one (an account's own password, most often), so it is never compared.
    public static func normalize(_ typed: String) -> String? {
        Base32.typedCode(typed, characters: characters)
    }

    /// The stored hash of a secret in any typed form, or nil when it cannot be one.
    public static func hash(_ typed: String, key: SecretKey) -> [UInt8]? {
        normalize(typed).map { KeyedHash.of($0, key: key) }
    }

    /// Whether two hashes are equal, in time that depends only on their length.
    public static func same(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count, !a.isEmpty else { return false }
        return sodium_memcmp(a, b, a.count) == 0
    }
}
