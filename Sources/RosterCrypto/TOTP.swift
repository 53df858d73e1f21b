import COATH
import CSodium

/// RFC 6238 time-based one-time passwords (SHA-1, 6 digits, 30 s steps), computed by Debian's liboath rather than by
/// HMAC code of our own.
public enum TOTP {
    /// Secret length in bytes: RFC 4226 recommends 160 bits for HMAC-SHA-1.
    public static let secretLength = 20
    /// Digits in a code.
    public static let digits = 6
    /// Seconds per step.
    public static let stepSeconds: Int64 = 30

    /// A fresh secret from libsodium's CSPRNG. The caller wipes it (`sodium_memzero`) when done.
    public static func generateSecret() throws(CryptoError) -> [UInt8] {
        guard Sodium.isReady else { throw .sodiumUnavailable }
        var secret = [UInt8](repeating: 0, count: secretLength)
        randombytes_buf(&secret, secret.count)
        return secret
    }

    /// The secret as authenticator apps and `oathtool -b` take it: upper-case base32, no padding.
    public static func base32(_ secret: [UInt8]) -> String {
        Base32.encode(secret)
    }

    /// The `otpauth://` URI an authenticator app reads (from a QR code), the username percent-encoded as UTF-8.
    public static func uri(secret: [UInt8], username: String) -> String {
        "otpauth://totp/Roster:\(percentEncoded(username))?secret=\(base32(secret))&issuer=Roster"
            + "&algorithm=SHA1&digits=\(digits)&period=\(stepSeconds)"
    }

    /// The step (`floor(unix / 30)` plus the offset that matched) whose code is `code`, looking `window` steps either
    /// side of `nowUnix`; nil when no step in the window matches, or `code` is not six ASCII digits.
    public static func validate(_ code: String, secret: [UInt8], nowUnix: Int64, window: Int = 1) -> Int64? {
        var typed = Array(code.utf8)
        defer { sodium_memzero(&typed, typed.count) }
        guard OATH.isReady, nowUnix >= 0, window >= 0, typed.count == digits,
              typed.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { return nil }
        var position: Int32 = 0
        let result = secret.withUnsafeBufferPointer { secretBytes in
            typed.withUnsafeMutableBytes { handle in
                secretBytes.withMemoryRebound(to: CChar.self) { secretChars in
                    oath_totp_validate2_callback(secretChars.baseAddress, secretChars.count, Int(nowUnix),
                                                 UInt32(stepSeconds), 0, UInt32(digits), window, &position,
                                                 constantTimeCompare, handle.baseAddress)
                }
            }
        }
        guard result >= 0 else { return nil }
        return nowUnix / stepSeconds + Int64(position)
    }

    /// What checking a code against a sealed secret found.
    public enum SealedCheck: Equatable, Sendable {
        /// The code is this step's (see `validate`).
        case matched(step: Int64)
        /// No step in the window has this code.
        case mismatch
        /// The seal does not open with `key`: another key file, or altered bytes.
        case unopenable
    }

    /// `validate` against the secret sealed in `sealed` (`SecretBox`, the `.totpSeal` subkey), so the opened secret
    /// never leaves this module and is wiped at once.
    public static func validate(_ code: String, sealed: [UInt8], key: SecretKey, nowUnix: Int64,
                                window: Int = 1) -> SealedCheck {
        guard var secret = SecretBox.open(sealed, key: key) else { return .unopenable }
        defer { sodium_memzero(&secret, secret.count) }
        return validate(code, secret: secret, nowUnix: nowUnix, window: window).map { .matched(step: $0) } ?? .mismatch
    }

    /// The code for `nowUnix` (tests and the by-hand check; the daemon only validates).
    static func generate(secret: [UInt8], nowUnix: Int64) -> String? {
        guard OATH.isReady else { return nil }
        var output = [CChar](repeating: 0, count: digits + 1)
        let result = secret.withUnsafeBufferPointer { secretBytes in
            secretBytes.withMemoryRebound(to: CChar.self) { secretChars in
                oath_totp_generate(secretChars.baseAddress, secretChars.count, Int(nowUnix), UInt32(stepSeconds), 0,
                                   UInt32(digits), &output)
            }
        }
        guard result == OATH_OK.rawValue else { return nil }
        return String(decoding: output.prefix(digits).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    // liboath's own comparison is strcmp; comparing in constant time keeps how many leading digits matched out of
    // the answer's timing.
    private static let constantTimeCompare: oath_validate_strcmp_function = { handle, candidate in
        guard let handle, let candidate else { return -1 }
        return sodium_memcmp(handle, candidate, TOTP.digits) == 0 ? 0 : 1
    }

    private static func percentEncoded(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var output: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                 UInt8(ascii: "~"):
                output.append(byte)
            default:
                output += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            }
        }
        return String(decoding: output, as: UTF8.self)
    }
}

/// Makes sure liboath is initialised exactly once before any of its functions run.
enum OATH {
    // A global `let` is initialised lazily and atomically, like `Sodium.initialised`.
    private static let initialised: Bool = oath_init() == OATH_OK.rawValue

    /// True once liboath is usable.
    static var isReady: Bool { initialised }
}
