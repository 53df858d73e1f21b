import RosterTestSupport
import Testing
@testable import RosterProtocol

@Suite("LineFramer")
struct LineFramerTests {
    private func lines(_ text: String) -> [LineFramer.Output] { [.line(Array(text.utf8))] }

    @Test func wholeChunkGivesEveryLine() {
        var framer = LineFramer(maxLineBytes: 100)
        #expect(framer.feed(Array("{\"a\":1}\n{\"b\":2}\n".utf8)) == lines("{\"a\":1}") + lines("{\"b\":2}"))
        #expect(framer.bufferedByteCount == 0)
    }

    @Test func byteByByteGivesTheSameLines() {
        var framer = LineFramer(maxLineBytes: 100)
        var outputs: [LineFramer.Output] = []
        for byte in Array("{\"a\":1}\n{\"b\":2}\n".utf8) { outputs += framer.feed([byte]) }
        #expect(outputs == lines("{\"a\":1}") + lines("{\"b\":2}"))
    }

    @Test func splitInsideUTF8CharacterKeepsTheCharacter() {
        let bytes = Array("{\"n\":\"张三\"}\n".utf8)
        let cut = bytes.firstIndex(of: 0xE5).map { $0 + 1 } ?? 0
        var framer = LineFramer(maxLineBytes: 100)
        let first = framer.feed(Array(bytes[..<cut]))
        let second = framer.feed(Array(bytes[cut...]))
        #expect(first.isEmpty)
        #expect(second == [.line(Array(bytes.dropLast()))])
    }

    @Test func crlfCountsAsNewline() {
        var framer = LineFramer(maxLineBytes: 100)
        #expect(framer.feed(Array("{}\r\n{}\n".utf8)) == lines("{}") + lines("{}"))
    }

    @Test func blankLinesAreIgnored() {
        var framer = LineFramer(maxLineBytes: 100)
        #expect(framer.feed(Array("\n  \n\r\n{}\n\t\n".utf8)) == lines("{}"))
    }

    @Test func exactlyAtTheLimitIsALine() {
        let limit = 64
        let body = String(repeating: "x", count: limit)
        var framer = LineFramer(maxLineBytes: limit)
        #expect(framer.feed(Array((body + "\n").utf8)) == lines(body))
        var crlf = LineFramer(maxLineBytes: limit)
        #expect(crlf.feed(Array((body + "\r\n").utf8)) == lines(body))
    }

    @Test func oneBytePastTheLimitIsTooLargeAndTheNextLineSurvives() {
        let limit = 64
        let body = String(repeating: "x", count: limit + 1)
        var framer = LineFramer(maxLineBytes: limit)
        #expect(framer.feed(Array((body + "\n{}\n").utf8)) == [.tooLarge] + lines("{}"))
    }

    @Test func oversizedLineIsReportedBeforeItsNewlineAndOnlyOnce() {
        var framer = LineFramer(maxLineBytes: 64)
        #expect(framer.feed([UInt8](repeating: 0x61, count: 64)).isEmpty)
        #expect(framer.feed([0x61]) == [.tooLarge])
        for _ in 0..<100 { #expect(framer.feed([UInt8](repeating: 0x61, count: 1000)).isEmpty) }
        #expect(framer.bufferedByteCount == 0)
        #expect(framer.feed(Array("tail\n{}\n".utf8)) == lines("{}"))
    }

    @Test func carriageReturnAtTheLimitWaitsForItsNewline() {
        var framer = LineFramer(maxLineBytes: 4)
        #expect(framer.feed(Array("abcd\r".utf8)).isEmpty)
        #expect(framer.feed(Array("\n".utf8)) == lines("abcd"))
        var other = LineFramer(maxLineBytes: 4)
        #expect(other.feed(Array("abcd\r".utf8)).isEmpty)
        #expect(other.feed(Array("x\n{}\n".utf8)) == [.tooLarge] + lines("{}"))
    }

    @Test func unterminatedTailIsALastLineAtEndOfInput() {
        var framer = LineFramer(maxLineBytes: 100)
        #expect(framer.feed(Array("{}\n{\"x\":1}".utf8)) == lines("{}"))
        var outputs: [LineFramer.Output] = []
        framer.finish(into: &outputs)
        #expect(outputs == lines("{\"x\":1}"))
    }

    @Test func everySplitOfAStreamGivesTheSameLines() {
        let stream = Array("{\"a\":\"é\"}\r\n\n{\"b\":[1,2]}\n{\"c\":\"한\"}\n".utf8)
        var whole = LineFramer(maxLineBytes: 100)
        let expected = whole.feed(stream)
        for cut in 0...stream.count {
            var framer = LineFramer(maxLineBytes: 100)
            let outputs = framer.feed(Array(stream[..<cut])) + framer.feed(Array(stream[cut...]))
            #expect(outputs == expected, "cut at \(cut)")
        }
    }
}

@Suite("LineFramer, borrowing")
struct LineFramerBorrowingTests {
    /// Lines as bytes: spans resolved against the chunk they point into, right after the feed.
    private func borrowed(_ framer: inout LineFramer, _ chunk: [UInt8]) -> [LineFramer.Output] {
        var outputs: [LineFramer.Output] = []
        chunk.withUnsafeBytes { framer.feedBorrowing($0, into: &outputs) }
        return outputs.map { output in
            if case .span(let range) = output { return .line(Array(chunk[range])) }
            return output
        }
    }

    @Test func givesWhatFeedGivesForEverySplit() {
        let text = "{\"a\":1}\r\n  \n{\"b\":\"张三\"}\n" + String(repeating: "x", count: 40) + "\n" + String(repeating: "y", count: 41)
            + "\r\n\t\r\n" + String(repeating: "z", count: 45) + "\nlast"
        let bytes = Array(text.utf8)
        var generator = SplitMix64(seed: 8)
        for _ in 0..<500 {
            var copying = LineFramer(maxLineBytes: 40)
            var borrowing = LineFramer(maxLineBytes: 40)
            var expected: [LineFramer.Output] = []
            var actual: [LineFramer.Output] = []
            var start = 0
            while start < bytes.count {
                let end = min(bytes.count, start + 1 + Int(generator.next() % 60))
                let chunk = Array(bytes[start..<end])
                expected += copying.feed(chunk)
                actual += borrowed(&borrowing, chunk)
                #expect(copying.bufferedByteCount == borrowing.bufferedByteCount)
                start = end
            }
            #expect(actual == expected)
        }
    }

    @Test func aWholeLineInTheChunkIsASpanAndACarriedOneIsCopied() {
        var framer = LineFramer(maxLineBytes: 100)
        var outputs: [LineFramer.Output] = []
        Array("ab\ncd".utf8).withUnsafeBytes { framer.feedBorrowing($0, into: &outputs) }
        #expect(outputs == [.span(0..<2)])
        outputs = []
        Array("e\r\nf\n".utf8).withUnsafeBytes { framer.feedBorrowing($0, into: &outputs) }
        #expect(outputs == [.line(Array("cde".utf8)), .span(3..<4)])
    }
}
