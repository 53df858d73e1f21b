import CSodium

/// A bearer token for `session.resume`: 32 random bytes given to the client, stored only as a hash.
public struct SessionToken: Sendable, CustomStringConvertible {
    /// What the client keeps: the 32 bytes as unpadded base64url (43 characters). Never store it.
    public let bearer: String
    /// What the database keeps: BLAKE2b-256 of `bearer`'s characters.
    public let hash: [UInt8]

    /// Length of `bearer`.
    public static let bearerLength = 43
    /// Length of `hash` in bytes.
    public static let hashLength = 32

    /// What a contacts-only token's bearer starts with (`auth.dav_login`'s). The hash covers the whole bearer, so
    /// the prefix cannot be dropped to widen a token: without it, the bearer hashes to no stored token.
    public static let contactsOnlyPrefix = "dav."

    /// A fresh token from libsodium's CSPRNG; a contacts-only one's bearer carries `contactsOnlyPrefix`.
    public static func generate(contactsOnly: Bool = false) throws(CryptoError) -> SessionToken {
        guard Sodium.isReady else { throw .sodiumUnavailable }
        var raw = [UInt8](repeating: 0, count: 32)
        randombytes_buf(&raw, raw.count)
        defer { sodium_memzero(&raw, raw.count) }
        var encoded = [CChar](repeating: 0, count: 64)
        sodium_bin2base64(&encoded, encoded.count, raw, raw.count, sodium_base64_VARIANT_URLSAFE_NO_PADDING)
        defer { sodium_memzero(&encoded, encoded.count) }
        let bearer = (contactsOnly ? contactsOnlyPrefix : "")
            + String(decoding: encoded.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return SessionToken(bearer: bearer, hash: digest(bearer))
    }

    /// The stored hash for a bearer string a client presented, or nil when it cannot be one of
    /// ours (wrong length or alphabet), so garbage never reaches the database.
    public static func hash(bearer: String) -> [UInt8]? {
        let bytes = Array(bearer.utf8.dropFirst(isContactsOnly(bearer: bearer) ? contactsOnlyPrefix.utf8.count : 0))
        guard bytes.count == bearerLength, bytes.allSatisfy(isBase64URL) else { return nil }
        return digest(bearer)
    }

    /// Whether `bearer` is a contacts-only token's (by its prefix; whether it is stored is the storage's to say).
    public static func isContactsOnly(bearer: String) -> Bool {
        bearer.utf8.starts(with: contactsOnlyPrefix.utf8)
    }

    // The redaction keeps a token out of logs that interpolate the value.
    public var description: String { "SessionToken(redacted)" }

    private static func digest(_ bearer: String) -> [UInt8] {
        // The bearer's exact characters are hashed (not its decoded bytes), so two spellings of
        // the same bytes cannot both be valid.
        var output = [UInt8](repeating: 0, count: hashLength)
        let input = Array(bearer.utf8)
        crypto_generichash(&output, output.count, input, UInt64(input.count), nil, 0)
        return output
    }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }
}
