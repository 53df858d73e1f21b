import Foundation

/// What a contact is searched by, computed once when it is written (DESIGN "Contacts search"): queries
/// only ever compare against these, so no query pays for ICU. Plain strings, so a store can keep them in
/// columns and rebuild an index without running ICU again.
public struct ContactSearchKeys: Equatable, Hashable, Sendable {
    /// The name through `foldQuery`: "Nguyễn Văn Ánh" → "nguyen van anh".
    public var folded: String
    /// The first letter of each word of `folded`: "Alice Smith" → "as".
    public var initials: String
    /// The Han reading without spaces or tones, "" without Han characters: "张三" → "zhangsan".
    public var pinyin: String
    /// The first letter of each syllable of the reading: "张三" → "zs".
    public var pinyinInitials: String
    /// The lead consonant of each Hangul syllable, as compatibility jamo: "김수현" → "ㄱㅅㅎ".
    public var hangulInitials: String
    /// The phone's decimal digits as ASCII: "+1 (555) 010-9999" → "15550109999".
    public var phoneDigits: String

    public init(folded: String, initials: String, pinyin: String, pinyinInitials: String,
                hangulInitials: String, phoneDigits: String) {
        self.folded = folded
        self.initials = initials
        self.pinyin = pinyin
        self.pinyinInitials = pinyinInitials
        self.hangulInitials = hangulInitials
        self.phoneDigits = phoneDigits
    }

    /// Computes every key; tens of µs for a Latin name, a few hundred for a Han one.
    public init(name: String, phone: String?) {
        let folded = ContactFolding.fold(name)
        let syllables = HanReading.syllables(of: name)
        self.init(
            folded: folded,
            initials: ContactSearchKeys.wordInitials(folded),
            pinyin: syllables.joined(),
            pinyinInitials: String(syllables.compactMap(\.first)),
            // Decomposed syllables, as some keyboards send them, must compose first to count as syllables.
            hangulInitials: HangulInitials.of(name.precomposedStringWithCanonicalMapping),
            phoneDigits: phone.map(ContactSearchKeys.digits) ?? "")
    }

    public init(contact: Contact) { self.init(name: contact.name, phone: contact.phone) }

    public init(draft: ContactDraft) { self.init(name: draft.name, phone: draft.phone) }

    /// The folding applied to names, for queries: "Nguyễn" and "NGUYEN" both give "nguyen", full-width
    /// "ＡＬＩＣＥ" gives "alice", and a typed "ㄱㅅ" stays in compatibility jamo like `hangulInitials`.
    public static func foldQuery(_ query: String) -> String { ContactFolding.fold(query) }

    /// A word starts after a space or ASCII punctuation, so "Jean-Luc Picard" has initials "jlp".
    static func wordInitials(_ folded: String) -> String {
        var result = String.UnicodeScalarView()
        var atWordStart = true
        for scalar in folded.unicodeScalars {
            if isWordSeparator(scalar) {
                atWordStart = true
            } else if atWordStart {
                result.append(scalar)
                atWordStart = false
            }
        }
        return String(result)
    }

    static func isWordSeparator(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII && !(scalar.properties.isAlphabetic || ("0"..."9").contains(scalar))
    }

    /// Any script's decimal digits, as ASCII, so a number typed with full-width digits is found by "010".
    static func digits(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            guard scalar.properties.numericType == .decimal, let value = scalar.properties.numericValue,
                  let digit = Unicode.Scalar(0x30 + UInt32(value)) else { continue }
            result.append(digit)
        }
        return String(result)
    }
}
