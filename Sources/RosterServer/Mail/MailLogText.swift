import RosterCore
import RosterRuntime

/// What the journal may say of a mail program's words: its own output can name the recipient ("alice@example.org:
/// unknown user"), and the journal names a recipient by domain only.
enum MailLogText {
    /// What stands where the recipient's local part was.
    static let blank = "…"

    /// `outcome` with the recipient's address (as `…@domain`) and its local part, wherever either stands as a
    /// word of its own, blanked out of the program's excerpt, without regard to ASCII case.
    static func withoutRecipient(_ outcome: SendmailOutcome, _ recipient: MailAddress) -> SendmailOutcome {
        guard case .failed(var failure) = outcome else { return outcome }
        failure.excerpt = withoutRecipient(failure.excerpt, recipient)
        return .failed(failure)
    }

    static func withoutRecipient(_ text: String, _ recipient: MailAddress) -> String {
        let local = Array(recipient.text.utf8.prefix { $0 != UInt8(ascii: "@") })
        let withoutAddress = replacingWords(Array(recipient.text.utf8), with: Array((blank + "@" + recipient.domain).utf8),
                                            in: Array(text.utf8))
        return String(decoding: replacingWords(local, with: Array(blank.utf8), in: withoutAddress), as: UTF8.self)
    }

    /// `text` with every match of `word` (ASCII case folded) replaced by `replacement`, but for one inside a longer
    /// word (a letter or digit against it) or a domain (an `@` before it).
    private static func replacingWords(_ word: [UInt8], with replacement: [UInt8], in text: [UInt8]) -> [UInt8] {
        guard !word.isEmpty, text.count >= word.count else { return text }
        let folded = word.map(lowered)
        var out: [UInt8] = []
        var index = 0
        while index < text.count {
            let end = index + word.count
            if end <= text.count, (index..<end).allSatisfy({ lowered(text[$0]) == folded[$0 - index] }),
               index == 0 || !(isAlphanumeric(text[index - 1]) || text[index - 1] == UInt8(ascii: "@")),
               end == text.count || !isAlphanumeric(text[end]) {
                out += replacement
                index = end
            } else {
                out.append(text[index])
                index += 1
            }
        }
        return out
    }

    private static func lowered(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        let lower = lowered(byte)
        return (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(lower) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(lower)
    }
}
