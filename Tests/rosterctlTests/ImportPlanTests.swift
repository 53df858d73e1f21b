import RosterProtocol
import Testing
@testable import rosterctl

@Suite("contacts import pieces")
struct ImportPlanTests {
    private func plan(_ text: String, _ format: ContactFormat) -> ImportPlan { ImportPlan(format: format, content: Array(text.utf8)) }

    @Test func theFormatComesFromTheNameThenTheContent() {
        #expect(ContactFormat.guess(path: "a/Book.VCF", content: []) == .vcard)
        #expect(ContactFormat.guess(path: "x.vcard", content: []) == .vcard)
        #expect(ContactFormat.guess(path: "x.csv", content: Array("BEGIN:VCARD".utf8)) == .csv)
        #expect(ContactFormat.guess(path: "-", content: Array("\r\n  begin:vcard\r\n".utf8)) == .vcard)
        #expect(ContactFormat.guess(path: "-", content: Array("name,phone\n".utf8)) == .csv)
    }

    @Test func csvRecordsKeepQuotedLineBreaksAndCountLinesLikeTheDaemon() {
        let records = ImportPlan.csvRecords(Array("name,note\r\n\"A\",\"two\r\nlines\"\r\n\r\nB,\"say \"\"hi\"\"\"\rC,x".utf8))
        #expect(records.map(\.line) == [1, 2, 4, 5, 6])
        #expect(records.map(\.blank) == [false, false, true, false, false])
    }

    @Test func aSmallFileIsOnePieceAndTheWholeFile() {
        let text = "name,phone\r\nA,1\r\nB,2\r\n"
        let plan = plan(text, .csv)
        #expect(plan.pieces(budget: 60_000) == [0..<2])
        #expect(plan.data(0..<2) == text)
    }

    @Test func csvPiecesRepeatTheHeaderAndMapLinesBack() {
        // Blank lines before the header are part of what every piece repeats, so line numbers up to it stay.
        let text = "\nname,phone\n" + (1...6).map { "Name \($0),\($0)\n" }.joined()
        let plan = plan(text, .csv)
        #expect(plan.prefixLines == 2)
        let pieces = plan.pieces(budget: 40)
        #expect(pieces.count > 1)
        #expect(pieces.flatMap { Array($0) } == Array(0..<6))
        for piece in pieces {
            #expect(plan.data(piece).hasPrefix("\nname,phone\n"))
        }
        let second = pieces[1]
        let firstLineOfSecond = plan.segments[second.lowerBound].line
        #expect(plan.fileLine(3, in: second) == firstLineOfSecond)
        #expect(plan.fileLine(2, in: second) == 2)
    }

    @Test func vcardPiecesStartAtBeginAndNeverInsideAFoldedCard() {
        let card = "BEGIN:VCARD\r\nVERSION:4.0\r\nFN:A\r\nNOTE:folded\r\n BEGIN:VCARD\r\nEND:VCARD\r\n"
        let text = "stray\r\n" + card + card + card
        let plan = plan(text, .vcard)
        #expect(plan.segments.map(\.line) == [1, 2, 8, 14])
        let pieces = plan.pieces(budget: 120)
        #expect(pieces.count >= 2)
        #expect(pieces.dropFirst().allSatisfy { plan.data($0).hasPrefix("BEGIN:VCARD") })
        #expect(pieces.map(plan.data).joined() == text)
        #expect(plan.fileLine(1, in: 2..<4) == 8)
        #expect(plan.fileLine(7, in: 2..<4) == 14)
    }

    @Test func aByteOrderMarkIsDropped() {
        let plan = plan("\u{FEFF}BEGIN:VCARD\nFN:A\nEND:VCARD\n", .vcard)
        #expect(plan.data(0..<plan.segments.count).hasPrefix("BEGIN:VCARD"))
    }

    @Test func escapesCountTowardsTheBudget() {
        let plan = plan("name\n\"a\"\"\"\n", .csv)
        // `"a"""` plus its line break is 6 bytes, 11 once its quotes and the LF are escaped in JSON.
        #expect(plan.segments.first?.encodedSize == 11)
    }

    @Test func theTallySumsMapsAndDropsRepeatedHeaderErrors() {
        let plan = plan("name,phone\n" + (1...4).map { "N\($0),x\n" }.joined(), .csv)
        var tally = ImportTally()
        tally.add(["added": 1, "skipped": 0, "errors": [["line": 2, "reason": "invalid_phone"]]], plan: plan, piece: 0..<2)
        tally.add(["added": 0, "skipped": 1, "errors": [["line": 3, "reason": "invalid_phone"], ["line": 1, "reason": "x"]]],
                  plan: plan, piece: 2..<4)
        tally.add(["added": 0, "skipped": 0, "errors": [["line": 1, "reason": "x"]]], plan: plan, piece: 3..<4)
        #expect(tally.added == 1)
        #expect(tally.skipped == 1)
        #expect(tally.json == ["added": 1, "skipped": 1, "errors": [["line": 1, "reason": "x"], ["line": 2, "reason": "invalid_phone"],
                                                                    ["line": 5, "reason": "invalid_phone"]],
                             "errors_total": 3])
    }

    /// The daemon lists the first 100 rejections of an answer and counts the rest in `errors_total`.
    @Test func rejectionsTheDaemonCountedButDidNotListAreCounted() {
        let plan = plan("name\nA\nB\n", .csv)
        var tally = ImportTally()
        tally.add(["added": 0, "skipped": 0, "errors": [["line": 2, "reason": "name_required"]], "errors_total": 250],
                  plan: plan, piece: 0..<2)
        tally.add(["added": 0, "skipped": 0, "errors": [["line": 2, "reason": "name_required"]]], plan: plan, piece: 0..<2)
        #expect(tally.rejected.count == 1)
        #expect(tally.unlisted == 249)
        #expect(tally.rejectedTotal == 250)
        #expect(tally.json["errors_total"] == 250)
    }
}
