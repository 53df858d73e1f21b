import CSodium

extension SecretKey {
    /// The label the check value is a keyed hash of; never changed, or every database would refuse its own key.
    static let checkLabel = Array("roster key check v1".utf8)

    /// What a database keeps to tell whether it is served with this key, and that says nothing else of it:
    /// keyed BLAKE2b-256 (`crypto_generichash`) of a fixed label under the key's own `keyCheck` subkey, as 64
    /// lower-case hex digits. Two keys give the same value only by a collision of the hash.
    public var checkValue: String {
        let subkey = subkey(for: .keyCheck)
        var digest = [UInt8](repeating: 0, count: 32)
        subkey.withBytes { key in
            _ = crypto_generichash(&digest, digest.count, Self.checkLabel, UInt64(Self.checkLabel.count), key,
                                   SecretKey.length)
        }
        var text = [CChar](repeating: 0, count: digest.count * 2 + 1)
        _ = sodium_bin2hex(&text, text.count, digest, digest.count)
        return String(decoding: text.prefix(digest.count * 2).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
