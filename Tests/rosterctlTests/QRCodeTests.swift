import Testing
@testable import rosterctl

/// The QR code `account totp enroll` draws: libqrencode's modules in half blocks, light modules drawn.
@Suite("QR code in half blocks")
struct QRCodeTests {
    @Test func aKnownMatrixGivesKnownText() {
        // Dark modules: top-left, top-right, bottom-left and the centre of a 3×3 matrix.
        let matrix = QRMatrix(size: 3, dark: [true, false, true,
                                              false, true, false,
                                              true, false, false])
        // Quiet zone 1: 5×5 modules, so 3 lines; the one past the last row counts as light.
        #expect(matrix.halfBlockLines(quietZone: 1) == ["█▀█▀█", "█▀▄██", "█████"])
    }

    @Test func eachHalfBlockIsTheTwoRowsItStandsFor() {
        // One column per combination: (light, light), (light, dark), (dark, light), (dark, dark).
        let matrix = QRMatrix(size: 4, dark: [false, false, true, true,
                                              false, true, false, true,
                                              false, false, false, false,
                                              false, false, false, false])
        #expect(matrix.halfBlockLines(quietZone: 0) == ["█▀▄ ", "████"])
    }

    @Test func theQuietZoneIsLightAllRound() {
        let lines = QRMatrix(size: 1, dark: [true]).halfBlockLines(quietZone: 4)
        #expect(lines.count == 5)
        #expect(lines.allSatisfy { $0.count == 9 })
        #expect(lines[0] == String(repeating: "█", count: 9))
        #expect(lines[1] == String(repeating: "█", count: 9))
        #expect(lines[2] == "████▄████")
        #expect(lines[3] == String(repeating: "█", count: 9))
        #expect(lines[4] == String(repeating: "█", count: 9))
    }

    @Test func anOTPAuthURIEncodesToAStandardSymbol() throws {
        let uri = "otpauth://totp/Roster:alice12?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=Roster"
        let matrix = try #require(QRMatrix(encoding: uri))
        // Versions run 21, 25, 29, … modules; 87 bytes at level M need version 5 (37).
        #expect(matrix.size == 37)
        #expect((matrix.size - 17) % 4 == 0)
        // The finder pattern's corner: dark, then the ring of light inside it, then the dark core.
        #expect(matrix.isDark(row: 0, column: 0))
        #expect(!matrix.isDark(row: 1, column: 1))
        #expect(matrix.isDark(row: 3, column: 3))
        #expect(matrix.isDark(row: 0, column: matrix.size - 1))
        #expect(matrix.isDark(row: matrix.size - 1, column: 0))
        let lines = matrix.halfBlockLines()
        #expect(lines.count == (matrix.size + 8 + 1) / 2)
        #expect(lines.allSatisfy { $0.count == matrix.size + 8 })
        // Two lines of quiet zone on top, all light.
        #expect(lines[0] == String(repeating: "█", count: matrix.size + 8))
        #expect(lines[1] == String(repeating: "█", count: matrix.size + 8))
        // The same text always gives the same symbol.
        #expect(QRMatrix(encoding: uri) == matrix)
    }
}
