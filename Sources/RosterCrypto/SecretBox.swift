import CSodium

/// Authenticated secret-key encryption (`crypto_secretbox_easy`, XSalsa20-Poly1305), the nonce stored first.
public enum SecretBox {
    /// Random nonce length, the first bytes of a sealed value.
    public static let nonceLength = 24
    /// Poly1305 tag length, after the nonce.
    public static let macLength = 16

    /// `nonce ‖ ciphertext ‖ tag` of `plaintext` under `key`, with a fresh random nonce.
    public static func seal(_ plaintext: [UInt8], key: SecretKey) throws(CryptoError) -> [UInt8] {
        guard Sodium.isReady else { throw .sodiumUnavailable }
        // A random 24-byte nonce never repeats in practice, so no counter has to be kept anywhere.
        var sealed = [UInt8](repeating: 0, count: nonceLength + macLength + plaintext.count)
        sealed.withUnsafeMutableBufferPointer { out in
            guard let base = out.baseAddress else { return }
            randombytes_buf(base, nonceLength)
            _ = key.withBytes { keyBytes in
                crypto_secretbox_easy(base + nonceLength, plaintext, UInt64(plaintext.count), base, keyBytes)
            }
        }
        return sealed
    }

    /// The plaintext of `sealed`, or nil when it is too short, was made with another key or was altered.
    public static func open(_ sealed: [UInt8], key: SecretKey) -> [UInt8]? {
        guard Sodium.isReady, sealed.count >= nonceLength + macLength else { return nil }
        // One spare byte keeps the output pointer non-nil for an empty plaintext; it is dropped below.
        var plaintext = [UInt8](repeating: 0, count: sealed.count - nonceLength - macLength + 1)
        let code = sealed.withUnsafeBufferPointer { input -> Int32 in
            guard let base = input.baseAddress else { return -1 }
            return key.withBytes { keyBytes in
                crypto_secretbox_open_easy(&plaintext, base + nonceLength, UInt64(input.count - nonceLength),
                                           base, keyBytes)
            }
        }
        guard code == 0 else {
            sodium_memzero(&plaintext, plaintext.count)
            return nil
        }
        plaintext.removeLast()
        return plaintext
    }
}
