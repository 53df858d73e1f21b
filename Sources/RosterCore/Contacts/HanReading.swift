import Foundation

/// Pinyin for names with Han characters, through ICU, the way Chinese address books search ("zs" → 张三).
enum HanReading {
    /// `Names` reads surnames as surnames (单 → shan, 曾 → zeng). About 130 µs a call, which is why
    /// keys are computed when a contact is written and never per query.
    private static let transform = StringTransform("Han-Latin/Names; Latin-ASCII; Lower")

    /// The syllables of the name's reading, lower-case ASCII letters and digits only: "张三" → ["zhang", "san"].
    /// Empty when the name has no Han character, so a Latin name gets no second, redundant reading.
    static func syllables(of name: String) -> [String] {
        guard name.unicodeScalars.contains(where: isHan),
              let latin = name.applyingTransform(transform, reverse: false) else { return [] }
        var words: [String] = []
        var current = ""
        for scalar in ContactFolding.fold(latin).unicodeScalars {
            if scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)) {
                current.unicodeScalars.append(scalar)
            } else if !current.isEmpty {
                words.append(current)
                current = ""
            }
        }
        if !current.isEmpty { words.append(current) }
        return words
    }

    /// CJK Unified Ideographs with their extensions and the compatibility block; 〇 too, a common name digit.
    static func isHan(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x3007, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF, 0x20000...0x323AF: true
        default: false
        }
    }
}
