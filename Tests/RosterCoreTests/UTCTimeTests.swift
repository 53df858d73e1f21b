import Testing
@testable import RosterCore

@Suite("UTC times for people")
struct UTCTimeTests {
    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00Z"),
        (999, "1970-01-01T00:00:00Z"),
        (-1, "1969-12-31T23:59:59Z"),
        (951_782_400_000, "2000-02-29T00:00:00Z"),
        (1_796_114_404_995, "2026-12-01T08:40:04Z"),
        (4_107_542_399_000, "2100-02-28T23:59:59Z"),
        (4_107_542_400_000, "2100-03-01T00:00:00Z"),
    ])
    func unixMillisecondsReadAsRFC3339(unixMs: Int64, text: String) {
        #expect(UTCTime.rfc3339(unixMs: unixMs) == text)
    }

    @Test func daysFromCivilInvertsCivilFromDays() {
        for days: Int64 in [-800_000, -719_468, -146_097, -1, 0, 1, 59, 60, 365, 10_957, 20_788, 47_541, 2_932_896] {
            #expect(UTCTime.days(fromCivil: UTCTime.civil(fromDays: days)) == days, "\(days)")
        }
    }

    @Test func monthLengthsFollowTheGregorianLeapYears() {
        #expect(UTCTime.daysIn(month: 2, year: 2024) == 29)
        #expect(UTCTime.daysIn(month: 2, year: 2026) == 28)
        #expect(UTCTime.daysIn(month: 2, year: 1900) == 28)
        #expect(UTCTime.daysIn(month: 2, year: 2000) == 29)
        #expect((1...12).map { UTCTime.daysIn(month: Int64($0), year: 2026) } == [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])
    }

    @Test func rfc3339ReadsBackWhatItWritesAndRefusesWhatIsNoTime() throws {
        for unixMs: Int64 in [0, -1_000, 951_782_400_000, 1_796_114_404_000, 4_107_542_400_000] {
            #expect(try UTCTime.unixMs(rfc3339: UTCTime.rfc3339(unixMs: unixMs)) == unixMs, "\(unixMs)")
        }
        #expect(try UTCTime.unixMs(rfc3339: "2026-12-01T09:40:04.995+01:00") == 1_796_114_404_995)
        let refused: [(String, UTCTime.ParseFailure)] = [
            ("", .malformed), ("2026-12-01", .malformed), ("2026-12-01T08:40:04", .malformed),
            ("2026-12-01T08:40:04Zjunk", .malformed), ("2026-12-01T08:40:04.Z", .malformed), ("１９７０-01-01T00:00:00Z", .malformed),
            ("2026-13-01T08:40:04Z", .outOfRange), ("2026-02-29T00:00:00Z", .outOfRange), ("2026-12-01T24:00:00Z", .outOfRange),
            ("2026-12-01T08:40:04+24:00", .outOfRange),
        ]
        for (text, failure) in refused {
            #expect(throws: failure, "\(text)") { try UTCTime.unixMs(rfc3339: text) }
        }
    }
}
