/// RFC 4648 base32 without padding, for TOTP secrets (upper case, as authenticator apps read them) and recovery
/// codes and app passwords (lower case, easier to read back). Encoding only: a code is compared in its typed form, never decoded.
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

    /// A code as typed, reduced to exactly `characters` characters of the lower-case alphabet (dashes and spaces
    /// dropped, ASCII capitals lowered); nil when what remains cannot be one, so garbage is never hashed.
    static func typedCode(_ typed: String, characters: Int) -> String? {
        var kept: [UInt8] = []
        for byte in typed.utf8 where byte != UInt8(ascii: "-") && byte != UInt8(ascii: " ") {
            let lowered = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
            guard isLowerDigit(lowered), kept.count < characters else { return nil }
            kept.append(lowered)
        }
        guard kept.count == characters else { return nil }
        return String(decoding: kept, as: UTF8.self)
    }

    /// True for a character of the lower-case alphabet.
    static func isLowerDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "2")...UInt8(ascii: "7")).contains(byte)
    }
}
