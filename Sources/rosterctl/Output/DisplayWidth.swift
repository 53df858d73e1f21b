/// Terminal columns a text takes: CJK and Hangul are two wide, combining marks none. Enough of wcwidth
/// for the scripts Roster speaks, without pulling in a locale-dependent C call.
func displayWidth(_ text: String) -> Int {
    text.unicodeScalars.reduce(0) { $0 + scalarWidth($1) }
}

func displayWidth(_ character: Character) -> Int {
    character.unicodeScalars.reduce(0) { $0 + scalarWidth($1) }
}

private func scalarWidth(_ scalar: Unicode.Scalar) -> Int {
    let value = scalar.value
    switch value {
    case 0..<0x20, 0x7F..<0xA0: return 0
    case 0x0300...0x036F, 0x1AB0...0x1AFF, 0x1DC0...0x1DFF, 0x200B...0x200F, 0x20D0...0x20FF, 0xFE00...0xFE0F,
         0xFE20...0xFE2F:
        return 0
    case 0x1160...0x11FF: return 0  // Hangul medial and final jamo join the lead consonant's cell
    case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
         0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1F300...0x1F64F,
         0x1F900...0x1F9FF, 0x20000...0x3FFFD:
        return 2
    default: return 1
    }
}

extension String {
    /// Pads with spaces to `width` terminal columns (never truncates).
    func padding(_ width: Int) -> String {
        let have = displayWidth(self)
        return have >= width ? self : self + String(repeating: " ", count: width - have)
    }
}
