/// What a mail is for: a code to type (verification, recovery) or a notice of something that happened.
///
/// Only the two kinds that carry a code carry one; a notice has no code and no link, so a notice can never be
/// used to act on the account.
public enum MailKind: Hashable, Sendable, CustomStringConvertible {
    /// Confirms that an address belongs to the account.
    case verification(code: MailCode)
    /// Sets a new password: the code, and the link `BaseURL/recover?user=NAME&code=CODE` that carries it.
    case recovery(code: MailCode)
    case passwordChanged
    /// Sent to the address the account had before the change.
    case emailChanged
    case totpDisabled
    case recoveryCodesMade
    case accountDeleted

    /// The kind without its code, for the outbox, the journal and the audit (never the code itself).
    public var name: MailKindName {
        switch self {
        case .verification: .verification
        case .recovery: .recovery
        case .passwordChanged: .passwordChanged
        case .emailChanged: .emailChanged
        case .totpDisabled: .totpDisabled
        case .recoveryCodesMade: .recoveryCodesMade
        case .accountDeleted: .accountDeleted
        }
    }

    /// The code a reader types, if this kind has one.
    public var code: MailCode? {
        switch self {
        case .verification(let code), .recovery(let code): code
        case .passwordChanged, .emailChanged, .totpDisabled, .recoveryCodesMade, .accountDeleted: nil
        }
    }

    /// The name only, so a logged or interpolated kind never shows its code.
    public var description: String { name.rawValue }
}

/// A mail's kind as stored and logged; the raw values are stable.
public enum MailKindName: String, Hashable, Sendable, CaseIterable {
    case verification
    case recovery
    case passwordChanged = "password_changed"
    case emailChanged = "email_changed"
    case totpDisabled = "totp_disabled"
    case recoveryCodesMade = "recovery_codes_made"
    case accountDeleted = "account_deleted"
}

/// A mailed code: exactly six ASCII digits. Printing one shows "<redacted>"; its digits are read through `exposed`.
public struct MailCode: Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The digits themselves; the name makes every read of them stand out in review.
    public let exposed: String

    /// How many digits a mailed code has.
    public static let length = 6

    public init(_ digits: String) throws(MailMessageError) {
        guard digits.utf8.count == MailCode.length,
              digits.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            throw .codeMalformed
        }
        exposed = digits
    }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
    // `dump` and Testing's failure output walk the mirror, not `description`.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

/// The web front end's address that links start from (`BaseURL=`), checked so a link is one unbroken token.
public struct MailBaseURL: Hashable, Sendable, CustomStringConvertible {
    /// The address without a trailing slash: `https://roster.example.org` or `http://127.0.0.1:8080/roster`.
    public let text: String

    /// `http://` or `https://`, a non-empty authority, and only printable ASCII without space, quote, angle
    /// brackets, backslash, `?` or `#` (a link appends its own path and query). Trailing slashes are dropped.
    public init(parsing raw: String) throws(MailMessageError) {
        switch Self.checked(raw) {
        case .success(let text): self.text = text
        case .failure: throw .baseURLMalformed
        }
    }

    /// For a literal known to pass `init(parsing:)` (the default), which a test holds it to.
    init(known text: String) {
        self.text = text
    }

    /// Which rule a text breaks, so that the configuration can say more than `base_url_malformed`.
    public enum Problem: Error, Equatable, Sendable {
        /// It does not start with `http://` or `https://`.
        case scheme
        /// It holds a `?` or a `#`: links append a query of their own.
        case queryOrFragment
        /// It holds a blank, a control character, non-ASCII or one of `"<>\^`{|}`.
        case character
        /// Nothing names a host between the scheme and the path.
        case host
    }

    /// Why `raw` is no base, or nil.
    public static func problem(in raw: String) -> Problem? {
        switch checked(raw) {
        case .success: nil
        case .failure(let problem): problem
        }
    }

    /// The base as kept (trailing slashes dropped), or the first rule `raw` breaks.
    private static func checked(_ raw: String) -> Result<String, Problem> {
        let bytes = Array(raw.utf8)
        let lower = raw.lowercased()
        let schemeLength = lower.hasPrefix("https://") ? 8 : lower.hasPrefix("http://") ? 7 : 0
        guard schemeLength > 0 else { return .failure(.scheme) }
        guard !bytes.contains(UInt8(ascii: "?")), !bytes.contains(UInt8(ascii: "#")) else {
            return .failure(.queryOrFragment)
        }
        guard bytes.allSatisfy({ (0x21...0x7E).contains($0) && !"\"<>\\^`{|}".utf8.contains($0) }) else {
            return .failure(.character)
        }
        var end = bytes.count
        while end > schemeLength, bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }
        let authority = bytes[schemeLength..<end].prefix { $0 != UInt8(ascii: "/") }
        guard !authority.isEmpty, authority.first != UInt8(ascii: "@"), authority.last != UInt8(ascii: "@") else {
            return .failure(.host)
        }
        return .success(String(decoding: bytes[..<end], as: UTF8.self))
    }

    public var description: String { text }

    /// `BASE/recover?user=NAME&code=CODE`, both values percent-encoded for a query.
    public func recoveryLink(username: String, code: MailCode) -> String {
        text + "/recover?user=" + Self.queryEncoded(username) + "&code=" + Self.queryEncoded(code.exposed)
    }

    /// RFC 3986's unreserved characters as they are, every other UTF-8 byte as `%XX` (upper-case hex).
    public static func queryEncoded(_ value: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                 UInt8(ascii: "~"):
                out.append(byte)
            default:
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
