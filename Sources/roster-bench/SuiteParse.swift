import RosterCore

/// CSV parsing was once quadratic in the line breaks inside a quoted field (1 MB took 8.6 s, 4 MB
/// 177 s). The parsers run here in-process, on the worst shape: one field (one vCard value) holding every
/// line break, 1 MB and 4 MB of it. Linear means the 4 MB figure is about four times the 1 MB one.
extension Suite {
    func parse() throws {
        let sizes = [1 << 20, 4 << 20]
        for format in ParseInput.Format.allCases {
            var milliseconds: [[Double]] = sizes.map { _ in [] }
            for (column, size) in sizes.enumerated() {
                let text = ParseInput.text(format, bytes: options.quick ? size / 64 : size)
                for _ in 0..<options.runs {
                    let started = Clock.now()
                    let result = ParseInput.parse(format, text)
                    milliseconds[column].append(Clock.microseconds(since: started) / 1_000)
                    guard result.errors.count + result.contacts.count == 1 else {
                        throw BenchError("the \(format.rawValue) parse input did not read as one record")
                    }
                }
            }
            let scenario = "parse \(format.rawValue), one field of line breaks"
            record(scenario, "1 MB", unit: "ms", rosterd: milliseconds[0], floor: nil)
            record(scenario, "4 MB", unit: "ms", rosterd: milliseconds[1], floor: nil)
            let small = Spread(milliseconds[0]), large = Spread(milliseconds[1])
            let ratio = small.median > 0 ? large.median / small.median : nil
            // Linear is 4×, quadratic 16×; caches alone take a linear parser past 5× on this VM.
            figures.append(Figure(scenario: scenario, metric: "4 MB over 1 MB", unit: "×", rosterd: Spread([ratio ?? 0]),
                                  floor: nil, ratio: nil, ratioOf: nil, target: "≤ 8×", met: ratio.map { $0 <= 8 }))
        }
    }
}

/// The parse scenario's input, also parsed once by `roster-bench --parse-once` for callgrind
/// (tools/instructions-per-parse.sh).
enum ParseInput {
    enum Format: String, CaseIterable {
        case csv, vcard
    }

    /// About `bytes` of one record whose note is nothing but line breaks: inside quotes for CSV, folded lines
    /// and escaped breaks for vCard.
    static func text(_ format: Format, bytes: Int) -> String {
        switch format {
        case .csv:
            return "name,note\r\nBreaks,\"" + String(repeating: "\r\n", count: bytes / 2) + "\"\r\n"
        case .vcard:
            return "BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Breaks\r\nNOTE:" + String(repeating: "\\n\r\n ", count: bytes / 5)
                + "\r\nEND:VCARD\r\n"
        }
    }

    static func parse(_ format: Format, _ text: String) -> ContactImportResult {
        switch format {
        case .csv: ContactCSV.parse(text)
        case .vcard: VCard.parse(text)
        }
    }
}
