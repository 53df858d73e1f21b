import CSodium

/// Unpredictable bytes from libsodium's CSPRNG, for what must be unique without being secret (a Message-ID, a
/// claimant's name).
public enum RandomBytes {
    /// `count` fresh bytes.
    public static func make(count: Int) throws(CryptoError) -> [UInt8] {
        guard Sodium.isReady else { throw .sodiumUnavailable }
        var bytes = [UInt8](repeating: 0, count: max(0, count))
        randombytes_buf(&bytes, bytes.count)
        return bytes
    }
}
