import CSodium

/// SHA-256 (libsodium's), for what a protocol fixes to it: WebAuthn's RP ID hash.
public enum SHA256 {
    /// The 32-byte digest of `bytes`.
    public static func digest(_ bytes: some Collection<UInt8>) throws(CryptoError) -> [UInt8] {
        guard Sodium.isReady else { throw .sodiumUnavailable }
        var out = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_BYTES))
        let input = Array(bytes)
        _ = crypto_hash_sha256(&out, input, UInt64(input.count))
        return out
    }
}
