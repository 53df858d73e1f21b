/// Unix times as people read them in logs and status lines: RFC 3339 in UTC, to the second. Pure arithmetic (no
/// time zone database, no clock), after Howard Hinnant's `civil_from_days`.
public enum UTCTime {
    /// `unixMs` as `2026-12-01T14:20:03Z`; milliseconds are dropped (rounded towards the past).
    public static func rfc3339(unixMs: Int64) -> String {
        let seconds = unixMs >= 0 ? unixMs / 1_000 : (unixMs - 999) / 1_000
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):"
            + "\(pad(secondOfDay % 3600 / 60, 2)):\(pad(secondOfDay % 60, 2))Z"
    }

    /// Why a text is no RFC 3339 time.
    public enum ParseFailure: Error, Equatable, Sendable {
        /// Not the shape of one.
        case malformed
        /// The shape, but no such day or time (a 13th month, an offset of 24 hours).
        case outOfRange
    }

    /// The Unix milliseconds of an RFC 3339 time: `2026-12-01T14:00:00Z`, `2026-12-01 14:00:00.250+01:00` (RFC 3339
    /// allows a space and a lower-case `t`/`z`); digits past the milliseconds are dropped.
    public static func unixMs(rfc3339 text: String) throws(ParseFailure) -> Int64 {
        let bytes = Array(text.utf8)
        func number(_ from: Int, _ count: Int) throws(ParseFailure) -> Int64 {
            guard from + count <= bytes.count else { throw .malformed }
            var value: Int64 = 0
            for byte in bytes[from..<from + count] {
                guard byte >= 0x30, byte <= 0x39 else { throw .malformed }
                value = value * 10 + Int64(byte - 0x30)
            }
            return value
        }
        func expect(_ index: Int, _ allowed: String) throws(ParseFailure) {
            guard index < bytes.count, allowed.utf8.contains(bytes[index]) else { throw .malformed }
        }
        guard bytes.count >= 20 else { throw .malformed }
        let year = try number(0, 4)
        try expect(4, "-")
        let month = try number(5, 2)
        try expect(7, "-")
        let day = try number(8, 2)
        try expect(10, "Tt ")
        let hour = try number(11, 2)
        try expect(13, ":")
        let minute = try number(14, 2)
        try expect(16, ":")
        let second = try number(17, 2)
        var index = 19
        var fractionMs: Int64 = 0
        if bytes[index] == UInt8(ascii: ".") {
            index += 1
            let start = index
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
            guard index > start else { throw .malformed }
            // Only milliseconds are kept; further digits are dropped, as the daemon's times have none.
            let kept = min(3, index - start)
            fractionMs = try number(start, kept)
            for _ in kept..<3 { fractionMs *= 10 }
        }
        guard index < bytes.count else { throw .malformed }
        var offsetSeconds: Int64 = 0
        switch bytes[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            index += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign: Int64 = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            let offsetHours = try number(index + 1, 2)
            try expect(index + 3, ":")
            let offsetMinutes = try number(index + 4, 2)
            guard offsetHours <= 23, offsetMinutes <= 59 else { throw .outOfRange }
            offsetSeconds = sign * (offsetHours * 3_600 + offsetMinutes * 60)
            index += 6
        default:
            throw .malformed
        }
        guard index == bytes.count else { throw .malformed }
        guard (1...12).contains(month), day >= 1, day <= UTCTime.daysIn(month: month, year: year),
              hour <= 23, minute <= 59, second <= 60 else { throw .outOfRange }
        // A leap second reads as the second after it: Unix time has none.
        let days = UTCTime.days(fromCivil: (year, month, day))
        let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second - offsetSeconds
        return seconds * 1_000 + fractionMs
    }

    /// The proleptic Gregorian date `days` after 1970-01-01.
    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// The days from 1970-01-01 to a proleptic Gregorian date: the inverse of `civil(fromDays:)`.
    public static func days(fromCivil date: (year: Int64, month: Int64, day: Int64)) -> Int64 {
        let year = date.month <= 2 ? date.year - 1 : date.year
        let era = (year >= 0 ? year : year - 399) / 400
        let yearOfEra = year - era * 400
        let dayOfYear = (153 * (date.month > 2 ? date.month - 3 : date.month + 9) + 2) / 5 + date.day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// How many days `month` (1 to 12) of `year` has.
    public static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
