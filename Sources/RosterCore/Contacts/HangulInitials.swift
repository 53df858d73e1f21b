/// The initial consonants of Hangul syllables, the way Korean phone books search ("ㄱㅅ" → 김수현).
enum HangulInitials {
    /// The 19 lead consonants in syllable order, as compatibility jamo (what a keyboard types alone).
    static let compatibilityLeads: [Unicode.Scalar] = ["ㄱ", "ㄲ", "ㄴ", "ㄷ", "ㄸ", "ㄹ", "ㅁ", "ㅂ", "ㅃ", "ㅅ", "ㅆ", "ㅇ", "ㅈ",
                                     "ㅉ", "ㅊ", "ㅋ", "ㅌ", "ㅍ", "ㅎ"]

    /// Each precomposed syllable (U+AC00–U+D7A3) is (lead × 21 + vowel) × 28 + tail, so lead = offset / 588.
    /// Anything else in the name contributes nothing.
    static func of(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars where (0xAC00...0xD7A3).contains(scalar.value) {
            result.append(compatibilityLeads[Int((scalar.value - 0xAC00) / 588)])
        }
        return String(result)
    }
}
