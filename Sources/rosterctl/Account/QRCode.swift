import CQRencode

/// A QR code's modules, row by row, `true` for dark; drawn on a terminal in Unicode half blocks.
struct QRMatrix: Equatable {
    let size: Int
    let dark: [Bool]

    /// The modules libqrencode chose for `text` (8-bit mode, error correction M, the smallest version that
    /// fits); nil if it cannot encode it (too long for any version).
    init?(encoding text: String) {
        guard let code = QRcode_encodeString(text, 0, QR_ECLEVEL_M, QR_MODE_8, 1) else { return nil }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        guard width > 0, let data = code.pointee.data else { return nil }
        // Bit 0 of each byte is the module's colour; the other bits say which part of the symbol it is.
        self.init(size: width, dark: (0..<(width * width)).map { data[$0] & 1 == 1 })
    }

    init(size: Int, dark: [Bool]) {
        precondition(dark.count == size * size, "a QR matrix is square")
        self.size = size
        self.dark = dark
    }

    func isDark(row: Int, column: Int) -> Bool {
        guard row >= 0, row < size, column >= 0, column < size else { return false }
        return dark[row * size + column]
    }

    /// The code as lines of half blocks, two module rows per line, inside a light quiet zone of `quietZone`
    /// modules (the standard asks for 4).
    ///
    /// Light modules are the drawn ones (`▀ ▄ █`), as `qrencode -t UTF8` does: on the usual light-on-dark
    /// terminal the code then reads dark on light, as a scanner wants. Past the last row (an odd count) is light.
    func halfBlockLines(quietZone: Int = 4) -> [String] {
        let span = size + 2 * quietZone
        func light(_ row: Int, _ column: Int) -> Bool { !isDark(row: row - quietZone, column: column - quietZone) }
        return stride(from: 0, to: span, by: 2).map { top in
            String((0..<span).map { column -> Character in
                let upper = light(top, column)
                let lower = top + 1 < span ? light(top + 1, column) : true
                switch (upper, lower) {
                case (true, true): return "█"
                case (true, false): return "▀"
                case (false, true): return "▄"
                case (false, false): return " "
                }
            })
        }
    }
}
