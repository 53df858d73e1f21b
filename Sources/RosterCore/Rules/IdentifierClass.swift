import Foundation

private typealias Script = UnicodeTables.Script

/// PRECIS IdentifierClass (RFC 8264 §9, with RFC 5892's exceptions and context rules), which RFC 8265's
/// UsernameCaseMapped applies to a name after width mapping, lower-casing and NFC.
///
/// It is what keeps look-alikes apart from the names they imitate: compatibility characters (`𝐚`, `ﬁ`, `ⅰ`,
/// `¹`) have an NFKC form other than themselves, default-ignorable code points (U+3164, U+FE0F) are
/// invisible, and symbols (emoji) and punctuation other than ASCII are not identifier characters.
public enum IdentifierClass {
    /// The class's verdict on one code point before its neighbours are looked at.
    enum Property: Equatable {
        case valid
        /// U+200C and U+200D: valid only after a virama (RFC 5892 A.1, A.2). A.1's other context for U+200C,
        /// between Arabic joining letters, needs Joining_Type, which Swift does not expose: refused, stricter.
        case joinControl
        /// Valid only in the context RFC 5892 Appendix A gives it (A.3–A.9).
        case contextual
        case disallowed
    }

    /// Whether every code point of `name` (already width-mapped, lower-cased and in NFC) is allowed where it stands.
    public static func allows(_ name: String) -> Bool {
        let scalars = Array(name.unicodeScalars)
        // NFKC(name) equals the NFC name exactly when no code point has a compatibility decomposition (NFKC
        // output holds none, and composition never makes one), so one Foundation call answers for all.
        let compatibilityFree = name.precomposedStringWithCompatibilityMapping.unicodeScalars
            .elementsEqual(name.unicodeScalars)
        for (index, scalar) in scalars.enumerated() {
            switch property(of: scalar, compatibilityFree: compatibilityFree) {
            case .valid:
                continue
            case .joinControl:
                guard index > 0, scalars[index - 1].properties.canonicalCombiningClass == .virama else { return false }
            case .contextual:
                guard contextAllows(scalars, at: index) else { return false }
            case .disallowed:
                return false
            }
        }
        return true
    }

    /// RFC 8264 §8's order of categories, for IdentifierClass. `compatibilityFree` says that no code point
    /// of the name has a compatibility mapping, which spares a Foundation call per code point.
    static func property(of scalar: Unicode.Scalar, compatibilityFree: Bool = false) -> Property {
        let value = scalar.value
        if let exception = exception(value) { return exception }
        // BackwardCompatible (§9.7) is empty.
        let properties = scalar.properties
        guard let age = properties.age, properties.generalCategory != .unassigned,
              (age.major, age.minor) <= UnicodeTables.version else { return .disallowed }
        if value >= 0x21 && value <= 0x7E { return .valid }
        if value == 0x200C || value == 0x200D { return .joinControl }
        if isOldHangulJamo(value) { return .disallowed }
        if properties.isDefaultIgnorableCodePoint || properties.isNoncharacterCodePoint { return .disallowed }
        switch properties.generalCategory {
        case .control: return .disallowed
        default: break
        }
        if !compatibilityFree && hasCompatibilityMapping(scalar) { return .disallowed }
        switch properties.generalCategory {
        case .lowercaseLetter, .uppercaseLetter, .otherLetter, .decimalNumber, .modifierLetter, .nonspacingMark,
             .spacingMark:
            return .valid
        default:
            // OtherLetterDigits, Spaces, Symbols and Punctuation are ID_DIS; anything else is DISALLOWED.
            return .disallowed
        }
    }

    /// RFC 5892 §2.6.
    private static func exception(_ value: UInt32) -> Property? {
        switch value {
        case 0x00DF, 0x03C2, 0x06FD, 0x06FE, 0x0F0B, 0x3007: .valid
        case 0x00B7, 0x0375, 0x05F3, 0x05F4, 0x30FB, 0x0660...0x0669, 0x06F0...0x06F9: .contextual
        case 0x0640, 0x07FA, 0x302E, 0x302F, 0x3031...0x3035, 0x303B: .disallowed
        default: nil
        }
    }

    /// Conjoining jamo (Hangul_Syllable_Type L, V or T): NFC has already composed the modern ones into syllables.
    private static func isOldHangulJamo(_ value: UInt32) -> Bool {
        (0x1100...0x11FF).contains(value) || (0xA960...0xA97F).contains(value) || (0xD7B0...0xD7FF).contains(value)
    }

    private static func hasCompatibilityMapping(_ scalar: Unicode.Scalar) -> Bool {
        !String(Character(scalar)).precomposedStringWithCompatibilityMapping.unicodeScalars.elementsEqual([scalar])
    }

    /// RFC 5892 Appendix A.3–A.9.
    private static func contextAllows(_ scalars: [Unicode.Scalar], at index: Int) -> Bool {
        let before = index > 0 ? scalars[index - 1] : nil
        let after = index + 1 < scalars.count ? scalars[index + 1] : nil
        func isScript(_ scalar: Unicode.Scalar?, _ id: UInt8) -> Bool {
            scalar.flatMap(UnicodeProperties.scripts(of:))?.contains(id) ?? false
        }
        switch scalars[index].value {
        case 0x00B7:
            // Catalan's "l·l".
            return before == "l" && after == "l"
        case 0x0375:
            return isScript(after, Script.greek)
        case 0x05F3, 0x05F4:
            return isScript(before, Script.hebrew)
        case 0x30FB:
            return scalars.contains { $0.value != 0x30FB
                && (isScript($0, Script.hiragana) || isScript($0, Script.katakana) || isScript($0, Script.han)) }
        case 0x0660...0x0669:
            return !scalars.contains { (0x06F0...0x06F9).contains($0.value) }
        case 0x06F0...0x06F9:
            return !scalars.contains { (0x0660...0x0669).contains($0.value) }
        default:
            return false
        }
    }
}
