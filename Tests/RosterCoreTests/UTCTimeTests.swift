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
}
