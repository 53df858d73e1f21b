import CSodium

/// The keyed BLAKE2b-256 every stored code is kept as (recovery codes, mailed codes), each kind under its own
/// subkey of the key file.
enum KeyedHash {
    static let length = 32

    /// The hash of `text`'s UTF-8 bytes under `key`; the copy of the bytes made for libsodium is wiped.
    static func of(_ text: String, key: SecretKey) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: length)
        var input = Array(text.utf8)
        defer { sodium_memzero(&input, input.count) }
        _ = key.withBytes { keyBytes in
            crypto_generichash(&output, output.count, input, UInt64(input.count), keyBytes, SecretKey.length)
        }
        return output
    }
}
