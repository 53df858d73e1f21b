/// Why a configuration file was refused; `description` is the line the daemon logs before keeping its old config.
public struct ConfigError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The stable kinds of failure; the raw value is `reason`, which scripts and tests may match on.
    public enum Kind: String, Sendable, CaseIterable {
        /// The line is not a comment, a `[Section]` header or a `Key=Value` assignment.
        case syntax
        case unknownSection = "unknown_section"
        case unknownKey = "unknown_key"
        /// The value does not parse as what the key expects (not a number, unknown unit, relative path, …).
        case invalidValue = "invalid_value"
        /// The value parses but lies outside the key's range, or contradicts its partner (a minimum above its maximum).
        case outOfRange = "out_of_range"
    }

    public var kind: Kind
    /// The file as the daemon named it when it passed the text in.
    public var path: String
    /// 1-based; 0 when the failure belongs to no single line.
    public var line: Int
    /// Names the key and what it expects; never localized, because it goes to the journal.
    public var detail: String

    public init(kind: Kind, path: String, line: Int, detail: String) {
        self.kind = kind
        self.path = path
        self.line = line
        self.detail = detail
    }

    /// The stable snake_case name of this failure.
    public var reason: String { kind.rawValue }

    /// `path:line: reason: detail`, the shape compilers and systemd use, so editors can jump to it.
    public var description: String { "\(path):\(line): \(reason): \(detail)" }
}

extension ConfigError {
    /// Quotes a value from the file for a message, cut short so a runaway line cannot flood the journal.
    static func quote(_ value: String) -> String {
        let limit = 64
        var shown = ""
        var count = 0
        for character in value {
            if count == limit { return "'\(shown)…'" }
            // Control characters would break the one-line log format.
            shown += character.unicodeScalars.allSatisfy({ $0.properties.generalCategory == .control })
                ? character.unicodeScalars.map { "\\u{\(String($0.value, radix: 16))}" }.joined()
                : String(character)
            count += 1
        }
        return "'\(shown)'"
    }
}
