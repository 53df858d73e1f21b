/// RFC 4648 base32 without padding, for TOTP secrets (upper case, as authenticator apps read them) and recovery
/// codes (lower case, easier to read back). Encoding only: a code is compared in its typed form, never decoded.
enum Base32 {
    private static let upper = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)
    private static let lower = Array("abcdefghijklmnopqrstuvwxyz234567".utf8)

    /// The unpadded encoding of `bytes`.
    static func encode(_ bytes: [UInt8], lowercase: Bool = false) -> String {
        let alphabet = lowercase ? lower : upper
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count * 8 + 4) / 5)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                output.append(alphabet[Int((buffer >> UInt32(bits)) & 31)])
            }
        }
        if bits > 0 {
            output.append(alphabet[Int((buffer << UInt32(5 - bits)) & 31)])
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// True for a character of the lower-case alphabet.
    static func isLowerDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "2")...UInt8(ascii: "7")).contains(byte)
    }
}
