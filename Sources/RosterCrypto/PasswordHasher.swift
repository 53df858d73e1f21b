import CSodium

/// Argon2id password hashing through libsodium's `crypto_pwhash_str` format.
///
/// Hashes look like `$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>`; the salt is random per hash
/// and the parameters travel inside the string, so old hashes still verify after a cost change.
public struct PasswordHasher: Sendable {
    /// Memory cost in KiB (OWASP's default: 19 MiB).
    public let memoryKiB: Int
    /// Time cost (passes over memory).
    public let iterations: Int

    private let memoryLimit: Int
    private let opsLimit: UInt64
    // A hash of a random password nobody knows, at this hasher's cost, so a log-in for an
    // unknown user can spend the same time as a real verify.
    let dummyHash: String

    /// A hasher with the given cost. Spends one hash computing the dummy used by `dummyVerify`.
    public init(memoryKiB: Int = 19_456, iterations: Int = 2) throws(CryptoError) {
        guard Sodium.isReady else { throw .sodiumUnavailable }
        let (bytes, overflow) = memoryKiB.multipliedReportingOverflow(by: 1024)
        guard !overflow, iterations > 0,
              bytes >= crypto_pwhash_memlimit_min(), bytes <= crypto_pwhash_memlimit_max(),
              UInt64(iterations) >= UInt64(crypto_pwhash_opslimit_min()),
              UInt64(iterations) <= UInt64(crypto_pwhash_opslimit_max())
        else { throw .invalidParameters }
        self.memoryKiB = memoryKiB
        self.iterations = iterations
        memoryLimit = bytes
        opsLimit = UInt64(iterations)

        var secret = [UInt8](repeating: 0, count: 32)
        randombytes_buf(&secret, secret.count)
        defer { sodium_memzero(&secret, secret.count) }
        dummyHash = try Self.hash(bytes: secret, opsLimit: opsLimit, memoryLimit: memoryLimit)
    }

    /// The Argon2id hash string of `password` (its UTF-8 bytes, exactly as given).
    public func hash(_ password: String) throws(CryptoError) -> String {
        var bytes = Array(password.utf8)
        defer { sodium_memzero(&bytes, bytes.count) }
        return try Self.hash(bytes: bytes, opsLimit: opsLimit, memoryLimit: memoryLimit)
    }

    /// True when `password` matches `hash`. Costs what the hash's own parameters say.
    public func verify(_ password: String, against hash: String) -> Bool {
        var bytes = Array(password.utf8)
        defer { sodium_memzero(&bytes, bytes.count) }
        return Self.verify(bytes: bytes, against: hash)
    }

    /// Spends the time of a real `verify` against a hash nobody can match, so "no such user"
    /// and "wrong password" take the same time.
    public func dummyVerify(_ password: String) {
        var bytes = Array(password.utf8)
        defer { sodium_memzero(&bytes, bytes.count) }
        _ = Self.verify(bytes: bytes, against: dummyHash)
    }

    /// True when `hash` should be replaced at the next successful log-in: it is not Argon2id,
    /// is malformed, or was made with other parameters than this hasher's.
    public func needsRehash(_ hash: String) -> Bool {
        // libsodium happily answers "no" for an Argon2i string with matching parameters.
        guard hash.hasPrefix("$argon2id$") else { return true }
        return hash.withCString { crypto_pwhash_str_needs_rehash($0, opsLimit, memoryLimit) } != 0
    }

    // MARK: libsodium calls

    private static func hash(bytes: [UInt8], opsLimit: UInt64, memoryLimit: Int) throws(CryptoError) -> String {
        var output = [CChar](repeating: 0, count: crypto_pwhash_strbytes())
        let code = withPasswordPointer(bytes) { pointer, length in
            crypto_pwhash_str_alg(&output, pointer, length, opsLimit, memoryLimit, crypto_pwhash_alg_argon2id13())
        }
        guard code == 0 else { throw .hashingFailed }
        // The output is NUL-terminated within crypto_pwhash_STRBYTES by libsodium's contract.
        let terminated = output.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: terminated, as: UTF8.self)
    }

    private static func verify(bytes: [UInt8], against hash: String) -> Bool {
        hash.withCString { stored in
            withPasswordPointer(bytes) { pointer, length in
                crypto_pwhash_str_verify(stored, pointer, length)
            }
        } == 0
    }

    private static func withPasswordPointer(_ bytes: [UInt8], _ body: (UnsafePointer<CChar>, UInt64) -> Int32) -> Int32 {
        // A NUL is appended so the pointer is never nil, even for an empty password; it is not
        // counted in the length. The padded copy is wiped like the original.
        var padded = bytes
        padded.append(0)
        defer { sodium_memzero(&padded, padded.count) }
        return padded.withUnsafeBufferPointer { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return -1 }
            return base.withMemoryRebound(to: CChar.self, capacity: buffer.count) { pointer in
                body(pointer, UInt64(bytes.count))
            }
        }
    }
}
