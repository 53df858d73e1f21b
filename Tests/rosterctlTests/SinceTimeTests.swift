import RosterCore
import Testing
@testable import rosterctl

/// `--since` against a fixed "now": every relative spelling journalctl takes, RFC 3339 with its variants, and
/// the mistakes.
@Suite("rosterctl --since times")
struct SinceTimeTests {
    /// 2026-12-01T18:00:00Z.
    static let now: Int64 = 1_796_148_000_000

    @Test func nowIsTheFixedTime() throws {
        #expect(UTCTime.rfc3339(unixMs: Self.now) == "2026-12-01T18:00:00Z")
        #expect(try SinceTime.parse("now", nowMs: Self.now) == Self.now)
    }

    @Test func spansCountBackFromNow() throws {
        let cases: [(String, Int64)] = [
            ("30s", 30), ("15m", 900), ("1h", 3_600), ("2d", 172_800), ("1w", 604_800),
            ("15min", 900), ("90sec", 90), ("3hours", 10_800), ("1 day", 86_400), ("2weeks", 1_209_600),
            ("-1h", 3_600), ("1h ago", 3_600), ("1h30m", 5_400), ("1h 30min", 5_400), ("2d 1h ago", 176_400),
            ("0s", 0), ("  1h  ", 3_600),
        ]
        for (text, seconds) in cases {
            #expect(try SinceTime.parse(text, nowMs: Self.now) == Self.now - seconds * 1_000, "\(text)")
        }
        // The same span is always the same distance back, whatever now is.
        #expect(try SinceTime.parse("1h", nowMs: 7_200_000) == 3_600_000)
    }

    @Test func rfc3339InEverySpellingItAllows() throws {
        let cases: [(String, String)] = [
            ("2026-12-01T14:00:00Z", "2026-12-01T14:00:00Z"),
            ("2026-12-01t14:00:00z", "2026-12-01T14:00:00Z"),
            ("2026-12-01 14:00:00Z", "2026-12-01T14:00:00Z"),
            ("2026-12-01T15:30:00+01:30", "2026-12-01T14:00:00Z"),
            ("2026-12-01T09:00:00-05:00", "2026-12-01T14:00:00Z"),
            ("2026-12-31T23:59:59-01:00", "2027-01-01T00:59:59Z"),
            ("2024-02-29T00:00:00Z", "2024-02-29T00:00:00Z"),
            ("2000-02-29T12:00:00Z", "2000-02-29T12:00:00Z"),
            ("1970-01-01T00:00:00Z", "1970-01-01T00:00:00Z"),
            ("1969-12-31T23:59:59Z", "1969-12-31T23:59:59Z"),
        ]
        for (text, utc) in cases {
            #expect(UTCTime.rfc3339(unixMs: try SinceTime.parse(text, nowMs: Self.now)) == utc, "\(text)")
        }
        #expect(try SinceTime.parse("2026-12-01T14:00:00.250Z", nowMs: Self.now) % 1_000 == 250)
        #expect(try SinceTime.parse("2026-12-01T14:00:00.5Z", nowMs: Self.now) % 1_000 == 500)
        #expect(try SinceTime.parse("2026-12-01T14:00:00.123456Z", nowMs: Self.now) % 1_000 == 123)
        #expect(try SinceTime.parse("1970-01-01T00:00:01Z", nowMs: Self.now) == 1_000)
    }

    @Test func mistakesSayWhy() {
        let cases: [(String, SinceTime.Failure)] = [
            ("", .empty), ("   ", .empty),
            ("1y", .unknownUnit("y")), ("5M", .unknownUnit("M")), ("1fortnight", .unknownUnit("fortnight")),
            ("h", .malformed("h")), ("1", .malformed("1")), ("1h 30", .malformed("1h 30")), ("ago", .malformed("ago")),
            ("-", .malformed("-")), ("1.5h", .malformed("1.5h")), ("yesterday", .malformed("yesterday")),
            ("2026-12-01", .malformed("2026-12-01")), ("2026-12-01T14:00:00", .malformed("2026-12-01T14:00:00")),
            ("2026-12-01T14:00Z", .malformed("2026-12-01T14:00Z")),
            ("2026-12-01T14:00:00+0100", .malformed("2026-12-01T14:00:00+0100")),
            ("2026-12-01T14:00:00Zjunk", .malformed("2026-12-01T14:00:00Zjunk")),
            ("2026-12-01T14:00:00.Z", .malformed("2026-12-01T14:00:00.Z")),
            ("2026-13-01T00:00:00Z", .outOfRange("2026-13-01T00:00:00Z")),
            ("2026-02-29T00:00:00Z", .outOfRange("2026-02-29T00:00:00Z")),
            ("1900-02-29T00:00:00Z", .outOfRange("1900-02-29T00:00:00Z")),
            ("2026-12-01T24:00:00Z", .outOfRange("2026-12-01T24:00:00Z")),
            ("2026-12-01T14:00:00+24:00", .outOfRange("2026-12-01T14:00:00+24:00")),
            ("999999999999w", .outOfRange("999999999999w")),
        ]
        for (text, failure) in cases {
            #expect(throws: failure, "\(text)") { try SinceTime.parse(text, nowMs: Self.now) }
        }
        #expect(SinceTime.Failure.unknownUnit("y").reason == "unknown_unit")
        #expect(SinceTime.Failure.malformed("x").description.contains("RFC 3339"))
    }
}
