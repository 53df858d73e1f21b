import CSodium

/// Base64url without padding (RFC 4648 §5), as WebAuthn's JSON carries every binary field, by libsodium's
/// constant-time codec: strict, so a padded, spaced or wrong-alphabet value is refused rather than guessed at.
public enum Base64URL {
    /// The text for `bytes`.
    public static func encode(_ bytes: [UInt8]) -> String {
        guard Sodium.isReady else { return "" }
        let variant = sodium_base64_VARIANT_URLSAFE_NO_PADDING
        let size = sodium_base64_encoded_len(bytes.count, variant)
        var out = [CChar](repeating: 0, count: size)
        _ = sodium_bin2base64(&out, size, bytes, bytes.count, variant)
        return String(decoding: out.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The bytes `text` encodes; nil when it is not strict unpadded base64url or decodes to more than `limit` bytes.
    public static func decode(_ text: String, limit: Int = 1 << 20) -> [UInt8]? {
        guard Sodium.isReady else { return nil }
        let input = Array(text.utf8)
        guard input.count <= (limit / 3 + 1) * 4 else { return nil }
        if input.isEmpty { return [] }
        var out = [UInt8](repeating: 0, count: input.count * 3 / 4 + 1)
        var length = 0
        let consumed: Int = input.withUnsafeBufferPointer { raw in
            raw.withMemoryRebound(to: CChar.self) { chars in
                guard let base = chars.baseAddress else { return -1 }
                var end: UnsafePointer<CChar>?
                let status = sodium_base642bin(&out, out.count, base, chars.count, nil, &length, &end,
                                               sodium_base64_VARIANT_URLSAFE_NO_PADDING)
                guard status == 0, let end else { return -1 }
                return end - base
            }
        }
        guard consumed == input.count, length <= limit else { return nil }
        return Array(out.prefix(length))
    }
}
