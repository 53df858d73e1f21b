import Foundation

/// One figure of the results table: rosterd across runs, the floor the same way, and the target.
struct Figure: Encodable {
    let scenario: String
    let metric: String
    let unit: String
    let rosterd: Spread
    let floor: Spread?
    /// rosterd's median over the floor's median (for throughput, rosterd over floor, so higher is better).
    let ratio: Double?
    /// What the ratio is taken against when it is not the floor (the storm compares with idle typing).
    let ratioOf: String?
    let target: String?
    let met: Bool?
}

/// The machine the figures were taken on, printed with them.
struct Machine: Encodable {
    let cpu: String
    let cores: Int
    let kernel: String
    let pinned: String

    static func describe(pinned: String) -> Machine {
        let cpuinfo = (try? readText("/proc/cpuinfo")) ?? ""
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { String($0.split(separator: ":", maxSplits: 1).last ?? "").trimmingCharacters(in: .whitespaces) } ?? "unknown"
        var name = utsname()
        uname(&name)
        let release = withUnsafeBytes(of: name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return Machine(cpu: model, cores: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))), kernel: release, pinned: pinned)
    }
}

/// The whole run's output.
struct Report: Encodable {
    let machine: Machine
    let runs: Int
    let figures: [Figure]
    let notes: [String]

    func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        do {
            return String(decoding: try encoder.encode(self), as: UTF8.self)
        } catch {
            // A figure that is not a number (NaN) cannot be JSON: say so beside the empty report.
            let line = Array("roster-bench: the report cannot be written as JSON: \(error)\n".utf8)
            _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
            return "{}"
        }
    }

    func table() -> String {
        var rows: [[String]] = [["scenario", "metric", "rosterd min / median / max", "floor median", "ratio", "target", "met"]]
        for figure in figures {
            let spread = "\(format(figure.rosterd.min)) / \(format(figure.rosterd.median)) / \(format(figure.rosterd.max)) \(figure.unit)"
            let floor = figure.floor.map { "\(format($0.median)) \(figure.unit)" } ?? "-"
            var ratio = figure.ratio.map { String(format: "%.2f×", $0) } ?? "-"
            if let of = figure.ratioOf, figure.ratio != nil { ratio += " " + of }
            let met = figure.met.map { $0 ? "yes" : "NO" } ?? "-"
            rows.append([figure.scenario, figure.metric, spread, floor, ratio, figure.target ?? "-", met])
        }
        var widths = [Int](repeating: 0, count: rows[0].count)
        for row in rows { for (column, cell) in row.enumerated() { widths[column] = max(widths[column], cell.count) } }
        var out = "machine: \(machine.cpu), \(machine.cores) cores, Linux \(machine.kernel); \(machine.pinned); \(runs) runs each\n"
        for (number, row) in rows.enumerated() {
            out += "| " + row.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }
                .joined(separator: " | ") + " |\n"
            if number == 0 { out += "|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|\n" }
        }
        for note in notes { out += "note: \(note)\n" }
        return out
    }

    /// Three significant figures or so, by magnitude (a cross-daemon latency can be negative).
    func format(_ value: Double) -> String {
        let magnitude = abs(value)
        if magnitude >= 100 { return String(format: "%.0f", value) }
        if magnitude >= 10 { return String(format: "%.1f", value) }
        return String(format: "%.2f", value)
    }
}
