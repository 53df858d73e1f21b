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
}
