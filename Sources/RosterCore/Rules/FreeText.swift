/// Free text that a peer names, that is stored, and that people read later in a table or a log line: a client's
/// name from `session.hello`, a lock's reason. One set of characters is refused where such text comes in and
/// escaped wherever text is shown, so a newline cannot print a second, believable row, an ANSI escape cannot hide
/// what follows, and a bidi control cannot reorder a line.
///
/// Lengths are counted in Unicode scalars, as usernames and emails are and as the schema's CHECKs count
/// (SQLite's `length()`, PostgreSQL's `char_length`): a grapheme cluster has no upper size (a letter may carry any
/// number of combining marks), and where its edges fall changes with the Unicode version.
public enum FreeText {
    /// Why a text was refused; the raw value is the error's `reason` (see `ParamProblem`).
    public enum Problem: String, Equatable, Sendable {
        case tooLong = "too_long"
        case controlCharacter = "control_character"
    }

    /// The longest `session.hello` `client`, in Unicode scalars.
    public static let clientMaxLength = 128
    /// The longest `admin.users.lock` `reason`, in Unicode scalars (the schema's CHECK on `locked_reason`).
    public static let lockReasonMaxLength = 200

    /// Whether `scalar` is one that text shown to people must not hold: C0 and C1 controls, DEL, the Unicode line
    /// and paragraph separators, and the bidi controls (embeddings, overrides, isolates, LRM, RLM and ALM).
    public static func isRefused(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00..<0x20, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x2028...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// The problem with `text`, or nil when it may be stored: longer than `maxLength` scalars is `too_long` (judged
    /// first, so a long text is refused before it is read for characters), then any refused scalar is
    /// `control_character`.
    public static func problem(_ text: String, maxLength: Int) -> Problem? {
        // A text of more UTF-8 bytes than four per allowed scalar is too long whatever it holds.
        if text.utf8.count > maxLength * 4 { return .tooLong }
        var count = 0
        var refused = false
        for scalar in text.unicodeScalars {
            count += 1
            if count > maxLength { return .tooLong }
            if isRefused(scalar) { refused = true }
        }
        return refused ? .controlCharacter : nil
    }

    /// `text` made safe to show on one line: every refused scalar is written as `\n`, `\t`, `\r` or `\u{…}` (lower
    /// hex), and a backslash is doubled so that the text cannot fake an escape. Text stored before these rules
    /// (or by another program) is shown through this, so it cannot forge a row either.
    public static func escaped(_ text: String) -> String {
        // A byte scan first: almost every text has nothing to escape. Every refused scalar from U+0080 up starts
        // with one of these lead bytes in UTF-8.
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == 0x5C || $0 == 0xC2 || $0 == 0xD8 || $0 == 0xE2 })
        else { return text }
        var out = ""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count + 8)
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x0A: out += "\\n"
            case 0x09: out += "\\t"
            case 0x0D: out += "\\r"
            case 0x5C: out += "\\\\"
            default:
                if isRefused(scalar) {
                    out += "\\u{" + String(scalar.value, radix: 16) + "}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
