import CSodium

/// Mailed codes: six decimal digits a person types from a mail, stored only as a keyed hash.
///
/// Why six digits and a fast keyed hash: a mailed code is short-lived (`CodeMinutes=`) and dies after five wrong
/// tries, so its million values only have to outlast five online guesses; a slow hash would add nothing there. The
/// key (its own subkey of the key file, `.mailCodes`, apart from the recovery codes') keeps a copy of the database
/// alone from testing the million values offline, and keeps a mailed code's hash from ever equalling a recovery
/// code's.
public enum MailCodes {
    /// Digits per code.
    public static let digits = 6
    /// How many codes there are: 10^6.
    public static let count: UInt32 = 1_000_000
    /// Length of a stored hash.
    public static let hashLength = KeyedHash.length

    /// A fresh code from libsodium's CSPRNG, each of the million equally likely (`randombytes_uniform`, which
    /// rejects the values a plain modulo would favour), zero-padded to six digits.
    public static func generate() throws(CryptoError) -> String {
        guard Sodium.isReady else { throw .sodiumUnavailable }
        return padded(randombytes_uniform(count))
    }

    /// The code as typed, reduced to its six ASCII digits (blanks and dashes dropped: `123 456`, `123-456`); nil
    /// when what remains cannot be a code, so garbage never reaches the database.
    public static func normalize(_ typed: String) -> String? {
        var kept: [UInt8] = []
        for byte in typed.utf8 where byte != UInt8(ascii: " ") && byte != UInt8(ascii: "-") {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte), kept.count < digits else { return nil }
            kept.append(byte)
        }
        guard kept.count == digits else { return nil }
        return String(decoding: kept, as: UTF8.self)
    }

    /// The stored hash of a code in any typed form (keyed BLAKE2b-256 of its six digits under `key`, the
    /// `.mailCodes` subkey), or nil when it cannot be a code.
    public static func hash(_ typed: String, key: SecretKey) -> [UInt8]? {
        normalize(typed).map { KeyedHash.of($0, key: key) }
    }

    /// `value` (below a million) as six digits, leading zeros kept.
    static func padded(_ value: UInt32) -> String {
        var bytes = [UInt8](repeating: UInt8(ascii: "0"), count: digits)
        var rest = value
        for index in stride(from: digits - 1, through: 0, by: -1) {
            bytes[index] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
