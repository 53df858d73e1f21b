import RosterProtocol

/// The two formats contacts travel in, as `contacts.import` and `contacts.export` name them.
enum ContactFormat: String, CaseIterable {
    case vcard
    case csv

    /// The format of a file: its extension if it has a known one, else its content (a file whose first
    /// non-blank line opens a vCard is one; anything else is read as CSV, which reports a missing header).
    static func guess(path: String, content: [UInt8]) -> ContactFormat {
        let name = path.split(separator: "/").last.map { $0.lowercased() } ?? ""
        if name.hasSuffix(".vcf") || name.hasSuffix(".vcard") { return .vcard }
        if name.hasSuffix(".csv") { return .csv }
        let start = content.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D || $0 == 0x0A }
        return String(decoding: start.prefix(11), as: UTF8.self).uppercased() == "BEGIN:VCARD" ? .vcard : .csv
    }
}

/// An import file cut into pieces that each fit one request line, with the way back to the file's line numbers.
///
/// The daemon reads one request per line and refuses lines over 64 KiB by default, and an import's data
/// travels inside one. So a big file is sent as several `contacts.import` calls, cut only between cards or
/// records: a CSV piece starts with the file's own header lines, so each piece reads like the whole file.
/// Every line number the daemon reports for a piece is mapped back to the line of the file it came from.
struct ImportPlan {
    /// One card or record (with any blank lines after it), as bytes of the file.
    struct Segment: Equatable {
        let bytes: Range<Int>
        /// The file's line the segment starts on, 1-based.
        let line: Int
        /// What the segment costs inside a JSON string (escapes included).
        let encodedSize: Int
    }

    let format: ContactFormat
    let bytes: [UInt8]
    /// The CSV header with any blank lines before it; empty for vCard.
    let prefix: Range<Int>
    /// How many lines `prefix` spans: a piece's lines up to this one are the file's own.
    let prefixLines: Int
    let segments: [Segment]

    /// Plans the import of `content` (valid UTF-8; a leading byte-order mark is dropped).
    init(format: ContactFormat, content: [UInt8]) {
        self.format = format
        var bytes = content
        // The daemon's CSV reader drops a BOM but its vCard reader would not see BEGIN behind one.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        self.bytes = bytes
        let units = format == .csv ? ImportPlan.csvRecords(bytes) : ImportPlan.vcardCards(bytes)
        var prefix = 0..<0
        var prefixLines = 0
        var body = units[...]
        if format == .csv {
            // The header is the first record that is not a blank line; everything up to its end is repeated.
            if let header = units.firstIndex(where: { !$0.blank }), header + 1 < units.count {
                prefix = 0..<units[header].bytes.upperBound
                prefixLines = units[header + 1].line - 1
                body = units[(header + 1)...]
            } else {
                // No records after a header: nothing to cut, the file goes as it is.
                prefix = 0..<bytes.count
                body = []
            }
        }
        self.prefix = prefix
        self.prefixLines = prefixLines
        segments = body.map { unit in
            Segment(bytes: unit.bytes, line: unit.line,
                    encodedSize: JSONWriter.encode(.string(String(decoding: bytes[unit.bytes], as: UTF8.self))).count - 2)
        }
    }

    private var prefixSize: Int { JSONWriter.encode(.string(String(decoding: bytes[prefix], as: UTF8.self))).count - 2 }

    /// Groups of consecutive segments, each with the prefix at most `budget` bytes as a JSON string; a segment
    /// larger than that on its own still gets a group (the daemon decides whether it fits).
    func pieces(budget: Int) -> [Range<Int>] {
        guard !segments.isEmpty else { return [0..<0] }
        var result: [Range<Int>] = []
        var start = 0
        var size = prefixSize
        for (index, segment) in segments.enumerated() {
            if index > start && size + segment.encodedSize > budget {
                result.append(start..<index)
                start = index
                size = prefixSize
            }
            size += segment.encodedSize
        }
        result.append(start..<segments.count)
        return result
    }

    /// The text of a piece: the prefix, then its segments as they are in the file.
    func data(_ piece: Range<Int>) -> String {
        guard let first = segments[piece].first, let last = segments[piece].last else {
            return String(decoding: bytes[prefix], as: UTF8.self)
        }
        return String(decoding: bytes[prefix] + bytes[first.bytes.lowerBound..<last.bytes.upperBound], as: UTF8.self)
    }

    /// The file's line for line `line` of piece `piece`.
    func fileLine(_ line: Int, in piece: Range<Int>) -> Int {
        guard line > prefixLines, let first = segments[piece].first else { return line }
        return first.line + (line - prefixLines - 1)
    }

    // MARK: cutting

    /// A run of the file that may start a piece, with the line it starts on.
    struct Unit {
        var bytes: Range<Int>
        var line: Int
        var blank: Bool
    }

    /// Length of the line break at `index` (CRLF, LF or a lone CR, as the daemon counts lines), or 0.
    private static func lineBreak(_ bytes: [UInt8], at index: Int) -> Int {
        switch bytes[index] {
        case 0x0D: index + 1 < bytes.count && bytes[index + 1] == 0x0A ? 2 : 1
        case 0x0A: 1
        default: 0
        }
    }

    /// CSV records as RFC 4180 reads them (a quote opens a quoted field only at the field's start, `""` inside
    /// is a quote, and line breaks inside quotes belong to the field), the way the daemon's reader splits them.
    static func csvRecords(_ bytes: [UInt8]) -> [Unit] {
        var units: [Unit] = []
        var index = 0
        var line = 1
        var start = 0
        var startLine = 1
        var quoted = false
        var fieldStarted = false
        while index < bytes.count {
            let breakLength = lineBreak(bytes, at: index)
            if breakLength > 0 {
                line += 1
                index += breakLength
                if !quoted {
                    units.append(Unit(bytes: start..<index, line: startLine, blank: index - start == breakLength))
                    start = index
                    startLine = line
                    fieldStarted = false
                }
                continue
            }
            let byte = bytes[index]
            if quoted {
                if byte == UInt8(ascii: "\"") {
                    if index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "\"") {
                        index += 2
                        continue
                    }
                    quoted = false
                }
            } else if byte == UInt8(ascii: ",") {
                fieldStarted = false
            } else if byte == UInt8(ascii: "\"") && !fieldStarted {
                quoted = true
                fieldStarted = true
            } else {
                fieldStarted = true
            }
            index += 1
        }
        if start < bytes.count { units.append(Unit(bytes: start..<bytes.count, line: startLine, blank: false)) }
        return units
    }

    /// vCard runs that start at a `BEGIN:VCARD` line (whatever comes before the first one is a run too). A folded
    /// line starts with a space, so it never reads as a BEGIN and a card is never cut inside.
    static func vcardCards(_ bytes: [UInt8]) -> [Unit] {
        var units: [Unit] = []
        var index = 0
        var line = 1
        var start = 0
        var startLine = 1
        while index < bytes.count {
            var end = index
            while end < bytes.count && lineBreak(bytes, at: end) == 0 { end += 1 }
            let text = String(decoding: bytes[index..<end], as: UTF8.self)
            if index > start && isBegin(text) {
                units.append(Unit(bytes: start..<index, line: startLine, blank: false))
                start = index
                startLine = line
            }
            index = end < bytes.count ? end + lineBreak(bytes, at: end) : end
            line += 1
        }
        if start < bytes.count { units.append(Unit(bytes: start..<bytes.count, line: startLine, blank: false)) }
        return units
    }

    private static func isBegin(_ line: String) -> Bool {
        var text = Substring(line)
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return text.uppercased() == "BEGIN:VCARD"
    }
}

/// What an import did, summed over its pieces.
struct ImportTally: Equatable {
    /// One rejected card or record.
    struct Rejection: Equatable {
        let line: Int
        let reason: String
    }

    var added = 0
    var skipped = 0
    var rejected: [Rejection] = []
    /// Rejections the daemon counted in `errors_total` but did not list (it lists the first 100 of an answer).
    var unlisted = 0

    /// Every rejection, listed or not.
    var rejectedTotal: Int { rejected.count + unlisted }

    /// Adds one piece's answer, mapping its line numbers back to the file; a rejection already counted (the
    /// CSV header is in every piece) is not counted twice.
    mutating func add(_ result: JSONValue, plan: ImportPlan, piece: Range<Int>) {
        added += Int(result["added"]?.int64Value ?? 0)
        skipped += Int(result["skipped"]?.int64Value ?? 0)
        let listed = result["errors"]?.arrayValue ?? []
        for error in listed {
            let line = plan.fileLine(Int(error["line"]?.int64Value ?? 0), in: piece)
            let rejection = Rejection(line: line, reason: error["reason"]?.stringValue ?? "")
            if !rejected.contains(rejection) { rejected.append(rejection) }
        }
        // A daemon from before `errors_total` listed every rejection.
        unlisted += max(0, Int(result["errors_total"]?.int64Value ?? Int64(listed.count)) - listed.count)
    }

    var json: JSONValue {
        ["added": .int(added), "skipped": .int(skipped),
         "errors": .array(rejected.sorted { $0.line < $1.line }.map { ["line": .int($0.line), "reason": .string($0.reason)] }),
         "errors_total": .int(rejectedTotal)]
    }
}

/// A short English gloss of an import rejection's reason, for people; scripts read the reason itself.
func describeImportReason(_ reason: String) -> String {
    switch reason {
    case "name_required": "no name"
    case "name_too_long": "the name is longer than 200 characters"
    case "invalid_phone": "a phone holds only digits, spaces and + - ( )"
    case "invalid_email": "not an email address"
    case "note_too_long": "the note is longer than 4,000 characters"
    case "unexpected_line": "a line outside any card"
    case "malformed_line": "a line that is not NAME:VALUE"
    case "missing_end": "a card without END:VCARD"
    case "wrong_field_count": "more or fewer fields than the header"
    case "missing_name_column": "no header row with a name column"
    case "unterminated_quote": "a quoted field that never ends"
    case "request_too_large": "one record larger than the daemon's line limit"
    default: reason
    }
}
