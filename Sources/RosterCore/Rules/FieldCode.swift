/// Why a field is in its state; the raw value is the wire `code` and the suffix of the message key `<field>.<code>`.
public enum FieldCode: String, CaseIterable, Sendable {
    case empty
    case validating
    case tooShort = "too_short"
    case tooLong = "too_long"
    case forbiddenCharacters = "forbidden_characters"
    /// A code point PRECIS IdentifierClass refuses: a compatibility character (𝐚, ﬁ, ⅰ, ¹), an invisible
    /// one (U+3164, U+FE0F), a symbol or emoji, non-ASCII punctuation, or one newer than the rules' Unicode.
    case disallowedCharacter = "disallowed_character"
    /// Right-to-left text arranged against RFC 5893's Bidi Rule.
    case bidiRule = "bidi_rule"
    /// Letters of more than one script (UTS #39 Highly Restrictive), as a Cyrillic а among Latin letters.
    case mixedScript = "mixed_script"
    case taken
    case available
    case notFound = "not_found"
    /// Log-in fields have no rules beyond being filled in.
    case entered
    case valid
    case mismatch
    case invalidEmail = "invalid_email"
    /// A new password that is the current one, compared as both are normalized.
    case sameAsCurrent = "same_as_current"
    /// A one-time code is six digits (RFC 6238 as Roster uses it); spaces between them are dropped.
    case notSixDigits = "not_six_digits"
    /// The database or quality check itself failed (seed 000's “userName检测出错”).
    case checkFailed = "check_failed"
    // libpwquality verdicts, as the server maps them (hardened preset).
    case weak
    case dictionaryWord = "dictionary_word"
    case containsUsername = "contains_username"
    case tooSimple = "too_simple"

    /// The codes a password-quality check may report; anything else the server says reads as `weak`.
    public static let qualityCodes: [FieldCode] = [.weak, .dictionaryWord, .containsUsername, .tooSimple]

    /// Maps a quality checker's reason to a code that has a message, so no unknown code reaches a client.
    public static func quality(_ reason: String) -> FieldCode {
        guard let code = FieldCode(rawValue: reason), qualityCodes.contains(code) else { return .weak }
        return code
    }
}
