import Glibc
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

    /// What a camera sees on a light-on-dark terminal: drawn halves light, the rest dark. zbar (another
    /// implementation than libqrencode) must read the URI back from that picture.
    @Test func aScannerReadsTheDrawnCodeBackAsTheURI() throws {
        let uri = "otpauth://totp/Roster:%E5%BC%A0%E4%B8%89abc?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Roster"
        let lines = try #require(QRMatrix(encoding: uri)).halfBlockLines()
        let scale = 4
        var rows: [[Bool]] = []
        for line in lines {
            let top = line.map { $0 == "█" || $0 == "▀" }
            let bottom = line.map { $0 == "█" || $0 == "▄" }
            for half in [top, bottom] {
                let wide = half.flatMap { Array(repeating: $0, count: scale) }
                rows += Array(repeating: wide, count: scale)
            }
        }
        // Plain PBM: 1 is black, so a light pixel is 0.
        let picture = "P1\n\(rows[0].count) \(rows.count)\n" + rows.map { $0.map { $0 ? "0" : "1" }.joined(separator: " ") }.joined(separator: "\n") + "\n"
        let path = "/tmp/rosterctl-qr-\(getpid()).pbm"
        defer { unlink(path) }
        let file = try #require(fopen(path, "w"))
        fputs(picture, file)
        fclose(file)
        let pipe = try #require(popen("/usr/bin/zbarimg --raw -q \(path) 2>/dev/null", "r"))
        var output = ""
        var buffer = [CChar](repeating: 0, count: 4096)
        while fgets(&buffer, Int32(buffer.count), pipe) != nil {
            output += String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        #expect(pclose(pipe) == 0, "zbarimg (Debian's zbar-tools, in TEST_PACKAGES): \(output)")
        #expect(output == uri + "\n")
    }
}
