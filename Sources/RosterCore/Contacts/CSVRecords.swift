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
    static func read(_ text: String) -> (records: [Record], unterminated: Unterminated?) {
        var records: [Record] = []
        var fields: [String] = []
        var field = String.UnicodeScalarView()
        var line = 1
        var recordLine = 1
        var quoted = false
        var fieldStarted = false
        var scalars = text.unicodeScalars[...]
        if scalars.first == "\u{FEFF}" { scalars = scalars.dropFirst() }

        func endRecord() {
            fields.append(String(field))
            if !(fields.count == 1 && fields[0].isEmpty) { records.append(Record(fields: fields, line: recordLine)) }
            fields = []
            field = String.UnicodeScalarView()
            fieldStarted = false
        }

        var iterator = scalars.makeIterator()
        var lookahead: Unicode.Scalar? = iterator.next()
        while let scalar = lookahead {
            lookahead = iterator.next()
            // CRLF is one line break: counting its LF again would shift every line number after it.
            var lineBreak: [Unicode.Scalar] = []
            if scalar == "\r" && lookahead == "\n" {
                lineBreak = ["\r", "\n"]
                lookahead = iterator.next()
            } else if scalar == "\r" || scalar == "\n" {
                lineBreak = [scalar]
            }
            if !lineBreak.isEmpty { line += 1 }
            if quoted {
                if !lineBreak.isEmpty {
                    field.append(contentsOf: lineBreak)
                } else if scalar != "\"" {
                    field.append(scalar)
                } else if lookahead == "\"" {
                    field.append("\"")
                    lookahead = iterator.next()
                } else {
                    quoted = false
                }
            } else if !lineBreak.isEmpty {
                endRecord()
                recordLine = line
            } else if scalar == "," {
                fields.append(String(field))
                field = String.UnicodeScalarView()
                fieldStarted = false
            } else if scalar == "\"" && !fieldStarted {
                quoted = true
                fieldStarted = true
            } else {
                field.append(scalar)
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
