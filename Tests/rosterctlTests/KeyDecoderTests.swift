import Testing
@testable import rosterctl

@Suite("key decoder")
struct KeyDecoderTests {
    private func decode(_ bytes: [UInt8]) -> [Key] {
        var decoder = KeyDecoder()
        return decoder.feed(bytes)
    }

    @Test func controlBytesAreTheReadlineKeys() {
        #expect(decode([0x01, 0x05, 0x15, 0x17, 0x0B, 0x03, 0x7F, 0x09, 0x0D]) ==
                [.lineStart, .lineEnd, .killToStart, .killWord, .killToEnd, .interrupt, .backspace, .tab, .enter])
    }

    @Test func escapeSequencesAreArrowsAndFriends() {
        #expect(decode(Array("\u{1B}[A\u{1B}[B\u{1B}[C\u{1B}[D\u{1B}[Z\u{1B}[3~\u{1B}[H\u{1B}OF\u{1B}[1;5C".utf8)) ==
                [.up, .down, .right, .left, .backTab, .delete, .home, .end, .right])
    }

    @Test func aSequenceSplitAcrossReadsWaitsForItsEnd() {
        var decoder = KeyDecoder()
        #expect(decoder.feed([0x1B]) == [])
        #expect(decoder.hasPending)
        #expect(decoder.feed([UInt8(ascii: "[")]) == [])
        #expect(decoder.feed([UInt8(ascii: "3")]) == [])
        #expect(decoder.feed([UInt8(ascii: "~"), UInt8(ascii: "x")]) == [.delete, .text("x")])
        #expect(!decoder.hasPending)
    }

    @Test func aLoneEscapeIsTheEscapeKeyOnceTheWaitIsOver() {
        var decoder = KeyDecoder()
        #expect(decoder.feed([0x1B]) == [])
        #expect(decoder.flush() == [.escape])
        #expect(!decoder.hasPending)
        #expect(decode([0x1B, UInt8(ascii: "a")]) == [.escape, .text("a")])
    }

    @Test func utf8TextSplitInsideACharacterComesOutWhole() {
        var decoder = KeyDecoder()
        let bytes = Array("用户".utf8)
        #expect(decoder.feed(Array(bytes[..<2])) == [])
        #expect(decoder.feed(Array(bytes[2...])) == [.text("用"), .text("户")])
    }

    @Test func invalidBytesAreSkipped() {
        #expect(decode([0xFF, 0x80, UInt8(ascii: "a"), 0x00]) == [.text("a")])
    }
}
