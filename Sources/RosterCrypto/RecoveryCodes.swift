import CSodium

/// Recovery codes: 10 random bytes each, shown as lower-case base32 in groups (`abcd-efgh-ijkl-mnop`), stored only
/// as a keyed hash.
///
/// Why a fast keyed hash (BLAKE2b-256 keyed with a subkey of the key file) and not Argon2id: a code has 80 random
/// bits, so nobody can guess one offline whatever the hash costs (2^80 tries), and online guesses are already held
/// back by the failed-log-in limiter. A slow hash would only put a worker-pool trip in front of every redemption.
/// The key adds what a plain hash would not: a copy of the database alone cannot even test a guess.
public enum RecoveryCodes {
    /// Codes issued at a time.
    public static let count = 10
    /// Random bytes per code (80 bits).
    public static let byteLength = 10
    /// Base32 characters per code, without the dashes.
    public static let characters = 16
    /// Length of a stored hash.
    public static let hashLength = KeyedHash.length

    /// A fresh set of codes, as shown once to the user, with the hashes to store (same order).
    public struct Issued: Sendable, CustomStringConvertible {
        /// What the user writes down, `xxxx-xxxx-xxxx-xxxx`.
        public let codes: [String]
        /// `hash(code)` of each code.
        public let hashes: [[UInt8]]

        // Keeps the codes out of any log line that interpolates the set.
        public var description: String { "RecoveryCodes.Issued(\(codes.count) codes, redacted)" }
    }

    /// `count` new codes from libsodium's CSPRNG and their hashes under `key` (the `.recoveryCodes` subkey).
    public static func generate(key: SecretKey) throws(CryptoError) -> Issued {
        guard Sodium.isReady else { throw .sodiumUnavailable }
        var codes: [String] = []
        var hashes: [[UInt8]] = []
        for _ in 0..<count {
            var raw = [UInt8](repeating: 0, count: byteLength)
            randombytes_buf(&raw, raw.count)
            let plain = Base32.encode(raw, lowercase: true)
            sodium_memzero(&raw, raw.count)
            codes.append(grouped(plain))
            hashes.append(digest(plain, key: key))
        }
        return Issued(codes: codes, hashes: hashes)
    }

    /// The code as typed, reduced to its 16 base32 characters (dashes and spaces dropped, lower-cased); nil when
    /// what remains cannot be a code, so garbage never reaches the database.
    public static func normalize(_ typed: String) -> String? {
        Base32.typedCode(typed, characters: characters)
    }

    /// The stored hash of a code in any typed form (keyed BLAKE2b-256 of its normalized characters), or nil when it
    /// cannot be a code.
    public static func hash(_ typed: String, key: SecretKey) -> [UInt8]? {
        normalize(typed).map { digest($0, key: key) }
    }

    private static func digest(_ normalized: String, key: SecretKey) -> [UInt8] {
        KeyedHash.of(normalized, key: key)
    }

    private static func grouped(_ plain: String) -> String {
        let bytes = Array(plain.utf8)
        let groups = stride(from: 0, to: bytes.count, by: 4).map { String(decoding: bytes[$0..<min($0 + 4, bytes.count)], as: UTF8.self) }
        return groups.joined(separator: "-")
    }
}
