import Foundation

/// The structured name (N) of a vCard, derived from a single display name and back.
enum VCardName {
    /// N's five components: family; given; additional; prefixes; suffixes.
    ///
    /// A name in Han or Hangul, a single word, or a Vietnamese name (which puts the family name first)
    /// is read family-first; otherwise the last word is the family name, as in "Alice Smith".
    static func components(of name: String) -> [String] {
        let words = name.split(whereSeparator: \.isWhitespace).map(String.init)
        guard words.count > 1, !name.unicodeScalars.contains(where: isEastAsian) else { return [name, "", "", "", ""] }
        // Decomposed input would hide the precomposed letters that identify Vietnamese.
        if name.precomposedStringWithCanonicalMapping.unicodeScalars.contains(where: isVietnamese) {
            return [words[0], words.dropFirst().joined(separator: " "), "", "", ""]
        }
        return [words[words.count - 1], words.dropLast().joined(separator: " "), "", "", ""]
    }

    /// A display name from N, for cards without FN (vCard 3.0 and older writers): Han and Hangul names
    /// are written family then given without a space ("张" "三" → "张三"), others given first.
    static func displayName(from components: [String]) -> String {
        func part(_ index: Int) -> String { index < components.count ? components[index].trimmingWhitespace() : "" }
        let family = part(0)
        let given = part(1)
        if (family + given).unicodeScalars.contains(where: isEastAsian) { return family + given }
        return [part(3), given, part(2), family, part(4)].filter { !$0.isEmpty }.joined(separator: " ")
    }

    private static func isEastAsian(_ scalar: Unicode.Scalar) -> Bool {
        HanReading.isHan(scalar) || (0xAC00...0xD7A3).contains(scalar.value) || (0x1100...0x11FF).contains(scalar.value)
    }

    /// ă đ ơ ư and the Latin Extended Additional block of tone-marked vowels, which only Vietnamese uses.
    private static func isVietnamese(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0102, 0x0103, 0x0110, 0x0111, 0x01A0, 0x01A1, 0x01AF, 0x01B0, 0x1EA0...0x1EF9: true
        default: false
        }
    }
}
