/// One `Key=Value` assignment of a systemd-style INI file, with the place it was written.
public struct IniEntry: Equatable, Sendable {
    public var section: String
    public var key: String
    public var value: String
    public var path: String
    /// The 1-based line the assignment starts on (its first line when it was continued with `\`).
    public var line: Int

    public init(section: String, key: String, value: String, path: String, line: Int) {
        self.section = section
        self.key = key
        self.value = value
        self.path = path
        self.line = line
    }
}

/// Parser of systemd unit-file syntax, systemd.syntax(7), without interpreting sections or keys.
///
/// Rules, following systemd's `config_parse()`:
/// - Lines are split at `\n` (a `\r\n` pair counts as one break); a UTF-8 byte-order mark before the first line is
///   dropped.
/// - A line whose first non-blank character is `#` or `;` is a comment, also between continued lines. Comments
///   never follow a value on the same line: `Key=a # b` has the value `a # b`.
/// - A line ending in an odd number of backslashes continues on the next line; its last backslash becomes a space
///   and the next line is appended as it is. A blank line ends a continuation; so does the end of the file.
/// - `[Name]` opens a section; the name is taken literally (no trimming), and must not be empty.
/// - `Key=Value` splits at the first `=`; blanks (space, tab) around the key and the value are trimmed. An empty key,
///   a line without `=`, or an assignment before the first section header is a `syntax` error.
/// - Sections may repeat and keys may repeat; interpreting repeats (the last one wins) is the caller's business.
///
/// Where systemd only warns and skips (assignments before a section), we refuse: a daemon that silently ignores half a
/// file is harder to operate than one that names the line.
public enum IniParser {
    /// The assignments of one file in the order written; throws at the first malformed line.
    public static func parse(_ text: String, path: String) throws(ConfigError) -> [IniEntry] {
        let scan = scan(text, path: path)
        if let error = scan.error { throw error }
        return scan.items.compactMap { item in
            switch item {
            case .entry(let entry): entry
            case .section: nil
            }
        }
    }

    /// A line of interest, in file order; section headers are kept so a caller can refuse an empty unknown section at
    /// its header.
    enum Item: Equatable, Sendable {
        case section(name: String, line: Int)
        case entry(IniEntry)
    }

    /// Everything before the first malformed line, and that line's error, so a caller can report whichever problem
    /// comes first in the file.
    static func scan(_ text: String, path: String) -> (items: [Item], error: ConfigError?) {
        var items: [Item] = []
        var section: String?
        // The logical line being assembled from continued physical lines, and where it began.
        var pending: String?
        var pendingLine = 0

        func interpret(_ logical: String, line: Int) -> ConfigError? {
            let content = trimmed(Substring(logical))
            guard let first = content.unicodeScalars.first else { return nil }
            if first == "#" || first == ";" { return nil }
            if first == "[" {
                guard content.unicodeScalars.last == "]", content.unicodeScalars.count >= 2 else {
                    return ConfigError(kind: .syntax, path: path, line: line,
                                       detail: "a section header must be '[Name]' alone on its line, got \(ConfigError.quote(String(content)))")
                }
                let name = String(content.dropFirst().dropLast())
                guard !name.isEmpty else {
                    return ConfigError(kind: .syntax, path: path, line: line, detail: "empty section name '[]'")
                }
                section = name
                items.append(.section(name: name, line: line))
                return nil
            }
            guard let equals = content.firstIndex(of: "=") else {
                return ConfigError(kind: .syntax, path: path, line: line,
                                   detail: "expected 'Key=Value', '[Section]' or a comment, got \(ConfigError.quote(String(content)))")
            }
            let key = String(trimmed(content[..<equals]))
            let value = String(trimmed(content[content.index(after: equals)...]))
            guard !key.isEmpty else {
                return ConfigError(kind: .syntax, path: path, line: line,
                                   detail: "an assignment needs a key before '=', got \(ConfigError.quote(String(content)))")
            }
            guard let section else {
                return ConfigError(kind: .syntax, path: path, line: line,
                                   detail: "\(key)= appears before any [Section] header")
            }
            items.append(.entry(IniEntry(section: section, key: key, value: value, path: path, line: line)))
            return nil
        }

        var lineNumber = 0
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            lineNumber += 1
            var physical = Substring(rawLine)
            if lineNumber == 1, physical.unicodeScalars.first == "\u{FEFF}" {
                physical = Substring(physical.unicodeScalars.dropFirst())
            }
            // Comments are dropped before joining, as systemd does, so one may sit between continued lines.
            if let first = trimmed(physical).unicodeScalars.first, first == "#" || first == ";" { continue }

            var logical = (pending ?? "") + physical
            if pending == nil { pendingLine = lineNumber }
            if endsInContinuation(logical) {
                logical.unicodeScalars.removeLast()
                logical.unicodeScalars.append(" ")
                pending = logical
                continue
            }
            pending = nil
            if let error = interpret(logical, line: pendingLine) { return (items, error) }
        }
        if let pending, let error = interpret(pending, line: pendingLine) { return (items, error) }
        return (items, nil)
    }

    /// An odd run of trailing backslashes: `\\` at the end is an escaped backslash, not a continuation.
    static func endsInContinuation(_ text: String) -> Bool {
        var run = 0
        for scalar in text.unicodeScalars.reversed() {
            guard scalar == "\\" else { break }
            run += 1
        }
        return run % 2 == 1
    }

    /// Trims only what systemd calls WHITESPACE, so a no-break space or ideographic space in a value survives.
    static func trimmed(_ text: Substring) -> Substring {
        let scalars = text.unicodeScalars
        let isBlank: (Unicode.Scalar) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
        guard let start = scalars.firstIndex(where: { !isBlank($0) }),
              let end = scalars.lastIndex(where: { !isBlank($0) }) else {
            return Substring()
        }
        return Substring(scalars[start...end])
    }
}
