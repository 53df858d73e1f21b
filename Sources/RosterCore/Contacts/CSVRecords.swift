/// RFC 4180 records: fields split at commas, quoted fields with `""` for a quote and line breaks inside.
enum CSVRecords {
    /// One record with the 1-based line it starts on.
    struct Record {
        var fields: [String]
        var line: Int
    }

    /// Why the text could not be read to its end.
    struct Unterminated: Error {
        /// The line of the record whose quoted field never closes.
        var line: Int
    }

    /// Records end at CRLF, LF or a lone CR outside quotes; blank lines are skipped. A quote inside an
    /// unquoted field, or text after a closing quote, is kept as text, the way spreadsheets read it.
    /// On an unterminated quote, the records before it are returned with the error.
    ///
    /// It reads UTF-8 bytes, not scalars: every byte it looks for is ASCII, which never occurs inside a
    /// multi-byte sequence, so a field cut at those bytes is whole UTF-8. The scalar reader this replaces added
    /// each line break with `UnicodeScalarView.append(contentsOf:)`, which copies the whole field every time
    /// (quadratic: 4 MB of quoted line breaks took 177 s); a field is now one byte buffer decoded once.
    static func read(_ text: String) -> (records: [Record], unterminated: Unterminated?) {
        var text = text
        return text.withUTF8 { read(bytes: $0) }
    }

    private static func read(bytes: UnsafeBufferPointer<UInt8>) -> (records: [Record], unterminated: Unterminated?) {
        let quote = UInt8(ascii: "\""), comma = UInt8(ascii: ","), cr = UInt8(ascii: "\r"), lf = UInt8(ascii: "\n")
        var records: [Record] = []
        var fields: [String] = []
        var field: [UInt8] = []
        var line = 1
        var recordLine = 1
        var quoted = false
        var fieldStarted = false
        var index = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0

        func endField() {
            fields.append(String(decoding: field, as: UTF8.self))
            field.removeAll(keepingCapacity: true)
            fieldStarted = false
        }
        func endRecord() {
            endField()
            if !(fields.count == 1 && fields[0].isEmpty) { records.append(Record(fields: fields, line: recordLine)) }
            fields = []
        }

        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if byte == cr || byte == lf {
                // CRLF is one line break: counting its LF again would shift every line number after it.
                let crlf = byte == cr && index < bytes.count && bytes[index] == lf
                if crlf { index += 1 }
                line += 1
                if quoted {
                    field.append(byte)
                    if crlf { field.append(lf) }
                } else {
                    endRecord()
                    recordLine = line
                }
            } else if quoted {
                if byte != quote {
                    field.append(byte)
                } else if index < bytes.count && bytes[index] == quote {
                    field.append(quote)
                    index += 1
                } else {
                    quoted = false
                }
            } else if byte == comma {
                endField()
            } else if byte == quote && !fieldStarted {
                quoted = true
                fieldStarted = true
            } else {
                field.append(byte)
                fieldStarted = true
            }
        }
        if quoted { return (records, Unterminated(line: recordLine)) }
        if fieldStarted || !fields.isEmpty { endRecord() }
        return (records, nil)
    }

    /// Quotes a field only when it must be: it holds a comma, a quote, CR or LF.
    static func field(_ value: String) -> String {
        guard value.unicodeScalars.contains(where: { $0 == "," || $0 == "\"" || $0 == "\r" || $0 == "\n" }) else {
            return value
        }
        return "\"" + value.replacingQuotes() + "\""
    }
}

extension String {
    fileprivate func replacingQuotes() -> String {
        var result = String.UnicodeScalarView()
        for scalar in unicodeScalars {
            result.append(scalar)
            if scalar == "\"" { result.append("\"") }
        }
        return String(result)
    }
}
