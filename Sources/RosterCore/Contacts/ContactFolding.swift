import Foundation

/// The one folding function for contact names and queries (DESIGN "Contacts search"): both sides go
/// through it, so whatever it does to a name it does to a query alike.
enum ContactFolding {
    /// NFKC (full-width → ASCII), diacritics stripped, case-folded, letters with strokes mapped to their
    /// base, whitespace runs collapsed to one space and trimmed, control characters dropped.
    static func fold(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return tidy(text.lowercased().unicodeScalars) }
        let folded = text.precomposedStringWithCompatibilityMapping
            .folding(options: [.diacriticInsensitive, .caseInsensitive, .widthInsensitive], locale: nil)
        return tidy(folded.unicodeScalars)
    }

    private static func tidy(_ scalars: String.UnicodeScalarView) -> String {
        var result = String.UnicodeScalarView()
        var pendingSpace = false
        for scalar in scalars {
            if scalar.properties.isWhitespace {
                pendingSpace = !result.isEmpty
                continue
            }
            if scalar.properties.generalCategory == .control { continue }
            if pendingSpace {
                result.append(" ")
                pendingSpace = false
            }
            // One scalar at a time: `UnicodeScalarView.append(contentsOf:)` copies the whole view on every call
            // (a bulk import folds every name), and a query may be as long as a request line.
            result.append(baseLetter(scalar))
        }
        return String(result)
    }

    /// Letters whose stroke or slash is part of the letter, not a combining mark, so diacritic folding
    /// keeps them: Vietnamese đ above all ("Đặng" must match "dang"). NFKC also turns a lone compatibility
    /// jamo such as ㄱ (U+3131) into the conjoining lead U+1100; mapping it back keeps a query "ㄱㅅ"
    /// comparable with Hangul initials, which are written in compatibility jamo.
    private static func baseLetter(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        switch scalar.value {
        case 0x0111, 0x0110, 0x00F0: "d"
        case 0x0142, 0x0141: "l"
        case 0x00F8, 0x00D8: "o"
        case 0x0131: "i"
        case 0x0127: "h"
        case 0x1100...0x1112: HangulInitials.compatibilityLeads[Int(scalar.value - 0x1100)]
        default: scalar
        }
    }
}
