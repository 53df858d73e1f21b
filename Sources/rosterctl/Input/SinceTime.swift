import RosterCore

/// A point in time as `audit --since` takes it: RFC 3339, or a span back from now as journalctl takes them.
///
/// Pure (the caller passes "now"), so a test pins every spelling against a fixed clock.
enum SinceTime {
    /// Why a `--since` value was not understood; `reason` is stable.
    enum Failure: Error, Equatable, CustomStringConvertible {
        case empty
        case unknownUnit(String)
        case malformed(String)
        case outOfRange(String)

        var reason: String {
            switch self {
            case .empty: "empty"
            case .unknownUnit: "unknown_unit"
            case .malformed: "malformed"
            case .outOfRange: "out_of_range"
            }
        }

        var description: String {
            switch self {
            case .empty: "--since needs a time"
            case .unknownUnit(let unit): "--since: unknown unit '\(unit)'; use s, m (min), h, d or w"
            case .malformed(let text): "--since takes RFC 3339 (2026-12-01T14:00:00Z) or a span like 30s, 15m, 1h, 2d, 1w, not '\(text)'"
            case .outOfRange(let text): "--since: '\(text)' is out of range"
            }
        }
    }

    /// Seconds per unit, in systemd.time(7)'s spellings ("m" is minutes, as journalctl reads it; months are left out
    /// since their length varies).
    private static let unitSeconds: [String: Int64] = {
        var table: [String: Int64] = [:]
        for (names, seconds) in [(["s", "sec", "secs", "second", "seconds"], Int64(1)),
                                 (["m", "min", "mins", "minute", "minutes"], 60),
                                 (["h", "hr", "hrs", "hour", "hours"], 3_600),
                                 (["d", "day", "days"], 86_400),
                                 (["w", "week", "weeks"], 604_800)] {
            for name in names { table[name] = seconds }
        }
        return table
    }()

    /// The time `text` names, in Unix milliseconds. A span (`1h`, `-1h`, `1h ago`, `1h 30min`) counts back from
    /// `nowMs`; `now` is `nowMs` itself.
    static func parse(_ text: String, nowMs: Int64) throws(Failure) -> Int64 {
        let trimmed = text.trimmingSpaces
        guard !trimmed.isEmpty else { throw .empty }
        if trimmed == "now" { return nowMs }
        if let first = trimmed.unicodeScalars.first, first.properties.numericType != nil,
           trimmed.count >= 10, trimmed.unicodeScalars.dropFirst(4).first == "-" {
            return try rfc3339(trimmed)
        }
        var span = trimmed
        if span.hasPrefix("-") { span.removeFirst() } else if span.hasSuffix(" ago") { span.removeLast(4) }
        let milliseconds = try spanMs(span.trimmingSpaces, original: text)
        let (result, overflow) = nowMs.subtractingReportingOverflow(milliseconds)
        guard !overflow else { throw .outOfRange(text) }
        return result
    }

    /// `1h30m`, `1h 30min`, `90s`: numbers each followed by a unit, summed.
    private static func spanMs(_ span: String, original: String) throws(Failure) -> Int64 {
        var scalars = Array(span.unicodeScalars)[...]
        guard !scalars.isEmpty else { throw .malformed(original) }
        var total: Int64 = 0
        while !scalars.isEmpty {
            while scalars.first == " " { scalars.removeFirst() }
            let digits = scalars.prefix { $0.isASCIIDigit }
            guard !digits.isEmpty, digits.count <= 12, let number = Int64(String(String.UnicodeScalarView(digits))) else {
                throw .malformed(original)
            }
            scalars.removeFirst(digits.count)
            while scalars.first == " " { scalars.removeFirst() }
            let letters = scalars.prefix { $0.properties.isAlphabetic }
            scalars.removeFirst(letters.count)
            let unit = String(String.UnicodeScalarView(letters))
            guard !unit.isEmpty else { throw .malformed(original) }
            guard let seconds = unitSeconds[unit] else { throw .unknownUnit(unit) }
            let (product, overflowA) = number.multipliedReportingOverflow(by: seconds * 1_000)
            let (sum, overflowB) = total.addingReportingOverflow(product)
            guard !overflowA, !overflowB else { throw .outOfRange(original) }
            total = sum
        }
        return total
    }

    /// RFC 3339 as `UTCTime.unixMs(rfc3339:)` reads it (the daemon's own parser, so both read a time alike).
    private static func rfc3339(_ text: String) throws(Failure) -> Int64 {
        do throws(UTCTime.ParseFailure) {
            return try UTCTime.unixMs(rfc3339: text)
        } catch {
            switch error {
            case .malformed: throw .malformed(text)
            case .outOfRange: throw .outOfRange(text)
            }
        }
    }
}

private extension String {
    var trimmingSpaces: String {
        var scalars = Substring(self)
        while scalars.first == " " { scalars.removeFirst() }
        while scalars.last == " " { scalars.removeLast() }
        return String(scalars)
    }
}

private extension Unicode.Scalar {
    var isASCIIDigit: Bool { value >= 0x30 && value <= 0x39 }
}
