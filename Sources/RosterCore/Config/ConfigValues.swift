/// Why a value string did not parse; the caller turns it into a `ConfigError` that names the key.
public enum ConfigValueFailure: Error, Equatable, Sendable {
    /// Not in the value's syntax at all (`invalid_value`).
    case malformed
    /// Well-formed but too large to represent (`out_of_range`).
    case overflow
}

/// The value syntaxes of systemd configuration files: booleans, whole numbers, time spans and byte sizes.
///
/// They follow systemd's `parse_boolean()`, `parse_sec()` and `parse_size()` so that an administrator's habits carry
/// over. Everything here is pure, so `rosterctl` and command-line options can share it.
public enum ConfigValue {
    /// `1 yes y true t on` and `0 no n false f off`, case-insensitively, as systemd's `parse_boolean()`.
    public static func boolean(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "1", "yes", "y", "true", "t", "on": true
        case "0", "no", "n", "false", "f", "off": false
        default: nil
        }
    }

    /// ASCII digits only: a sign, blanks or a hexadecimal prefix in a config file are more likely typos than intent.
    public static func wholeNumber(_ text: String) throws(ConfigValueFailure) -> Int {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            throw .malformed
        }
        guard let value = Int(text) else { throw .overflow }
        return value
    }

    /// The units `timeSpan(_:)` knows, in nanoseconds; long names are systemd's too.
    static let timeUnits: [String: Int128] = {
        let us: Int128 = 1_000, ms: Int128 = 1_000_000, s: Int128 = 1_000_000_000
        var units: [String: Int128] = [:]
        for name in ["us", "usec", "µs", "μs"] { units[name] = us }
        for name in ["ms", "msec"] { units[name] = ms }
        for name in ["s", "sec", "second", "seconds"] { units[name] = s }
        for name in ["m", "min", "minute", "minutes"] { units[name] = 60 * s }
        for name in ["h", "hr", "hour", "hours"] { units[name] = 3600 * s }
        for name in ["d", "day", "days"] { units[name] = 86_400 * s }
        for name in ["w", "week", "weeks"] { units[name] = 604_800 * s }
        return units
    }()

    /// The suffixes `size(_:)` knows, base 1024 as systemd's `parse_size(…, 1024, …)`; the `KiB` forms are extra.
    static let sizeUnits: [String: Int128] = {
        var units: [String: Int128] = ["B": 1]
        for (power, letter) in ["K", "M", "G", "T"].enumerated() {
            let factor = Int128(1) << (10 * (power + 1))
            units[letter] = factor
            units[letter + "iB"] = factor
        }
        return units
    }()

    /// A systemd time span: `300` (seconds unless `defaultUnit` says otherwise), `500ms`, `5min`, `1h 30min`,
    /// `1h30min`, `1.5h`, `2d`, `1w`. Components add up; a number without a unit takes `defaultUnit`.
    public static func timeSpan(_ text: String, defaultUnit: String = "s") throws(ConfigValueFailure) -> Duration {
        guard let unit = timeUnits[defaultUnit] else { throw .malformed }
        let nanoseconds = try sum(text, units: timeUnits, defaultUnit: unit)
        guard let exact = Int64(exactly: nanoseconds) else { throw .overflow }
        return .nanoseconds(exact)
    }

    /// A systemd byte size: `65536`, `64K`, `8M`, `1G`, `1.5M`, `1G 512M`; base 1024, fractions rounded down to whole
    /// bytes.
    public static func size(_ text: String) throws(ConfigValueFailure) -> Int {
        let bytes = try sum(text, units: sizeUnits, defaultUnit: 1)
        guard let exact = Int(exactly: bytes) else { throw .overflow }
        return exact
    }

    /// `number [blanks] [unit]`, repeated; 128-bit arithmetic so that no realistic input overflows before the final
    /// range check, which then reports `overflow` rather than wrapping.
    static func sum(_ text: String, units: [String: Int128], defaultUnit: Int128) throws(ConfigValueFailure) -> Int128 {
        let scalars = Array(text.unicodeScalars)
        let limit = Int128(Int64.max)
        var index = 0
        var total: Int128 = 0
        var components = 0

        func isDigit(_ scalar: Unicode.Scalar) -> Bool { scalar >= "0" && scalar <= "9" }
        func skipBlanks() { while index < scalars.count, scalars[index] == " " || scalars[index] == "\t" { index += 1 } }

        skipBlanks()
        while index < scalars.count {
            var whole: Int128 = 0
            var wholeDigits = 0
            while index < scalars.count, isDigit(scalars[index]) {
                whole = whole * 10 + Int128(scalars[index].value - 48)
                wholeDigits += 1
                if whole > limit { throw .overflow }
                index += 1
            }
            // Nine fractional digits resolve a nanosecond of a second; further digits cannot matter.
            var fraction: Int128 = 0
            var scale: Int128 = 1
            var fractionDigits = 0
            if index < scalars.count, scalars[index] == "." {
                index += 1
                while index < scalars.count, isDigit(scalars[index]) {
                    if fractionDigits < 9 {
                        fraction = fraction * 10 + Int128(scalars[index].value - 48)
                        scale *= 10
                    }
                    fractionDigits += 1
                    index += 1
                }
                guard fractionDigits > 0 else { throw .malformed }
            }
            guard wholeDigits + fractionDigits > 0 else { throw .malformed }
            skipBlanks()
            var name = String.UnicodeScalarView()
            while index < scalars.count, scalars[index].properties.isAlphabetic {
                name.append(scalars[index])
                index += 1
            }
            let factor: Int128
            if name.isEmpty {
                factor = defaultUnit
            } else if let known = units[String(name)] {
                factor = known
            } else {
                throw .malformed
            }
            total += whole * factor + fraction * factor / scale
            if total > limit { throw .overflow }
            components += 1
            skipBlanks()
        }
        guard components > 0 else { throw .malformed }
        return total
    }

    /// The shortest systemd spelling of a span, e.g. `1h 30min`, `500ms`, `0`; used in messages about ranges.
    public static func format(_ duration: Duration) -> String {
        var rest = Int128(duration.nanoseconds)
        guard rest > 0 else { return "0" }
        let steps: [(String, Int128)] = [("w", 604_800_000_000_000), ("d", 86_400_000_000_000),
                                         ("h", 3_600_000_000_000), ("min", 60_000_000_000), ("s", 1_000_000_000),
                                         ("ms", 1_000_000), ("us", 1_000), ("ns", 1)]
        var parts: [String] = []
        for (name, factor) in steps where rest >= factor {
            parts.append("\(rest / factor)\(name)")
            rest %= factor
        }
        return parts.joined(separator: " ")
    }

    /// A size with the largest base-1024 suffix that divides it exactly, e.g. `64K`, `8M`, `1000`.
    public static func formatSize(_ bytes: Int) -> String {
        guard bytes > 0 else { return "\(bytes)" }
        for (letter, shift) in [("T", 40), ("G", 30), ("M", 20), ("K", 10)] where bytes % (1 << shift) == 0 {
            return "\(bytes >> shift)\(letter)"
        }
        return "\(bytes)"
    }
}

/// Syslog severities (RFC 5424, `<syslog.h>`), as systemd's `LogLevel=` names them; a larger raw value is chattier.
public enum LogLevel: Int, Sendable, CaseIterable, Comparable, CustomStringConvertible {
    case emerg = 0
    case alert = 1
    case crit = 2
    case err = 3
    case warning = 4
    case notice = 5
    case info = 6
    case debug = 7

    /// A name (`warning`, case-insensitive) or a digit `0`…`7`, as systemd's `log_level_from_string()`.
    public init?(parsing text: String) {
        let lowered = text.lowercased()
        if let level = LogLevel.allCases.first(where: { $0.name == lowered }) {
            self = level
        } else if lowered.count == 1, let number = Int(lowered), let level = LogLevel(rawValue: number) {
            self = level
        } else {
            return nil
        }
    }

    /// The syslog name, which is also what `LogLevel=` accepts.
    public var name: String {
        switch self {
        case .emerg: "emerg"
        case .alert: "alert"
        case .crit: "crit"
        case .err: "err"
        case .warning: "warning"
        case .notice: "notice"
        case .info: "info"
        case .debug: "debug"
        }
    }

    public var description: String { name }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}
