/// One run's measurements of one figure (latencies in µs, say), with nearest-rank percentiles.
struct Samples {
    private(set) var values: [Double] = []
    private var sorted = true

    var count: Int { values.count }

    mutating func add(_ value: Double) {
        if let last = values.last, value < last { sorted = false }
        values.append(value)
    }

    mutating func append(contentsOf other: Samples) {
        for value in other.values { add(value) }
    }

    /// The nearest-rank percentile, `p` in 0...100; 0 for no samples.
    mutating func percentile(_ p: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        if !sorted {
            values.sort()
            sorted = true
        }
        let rank = Int((p / 100 * Double(values.count)).rounded(.up))
        return values[min(max(rank - 1, 0), values.count - 1)]
    }
}

/// The min, median and max of one figure across repeated runs.
struct Spread: Encodable {
    let min: Double
    let median: Double
    let max: Double
    let runs: [Double]

    init(_ runs: [Double]) {
        let ordered = runs.sorted()
        self.runs = runs
        min = ordered.first ?? 0
        max = ordered.last ?? 0
        median = ordered.isEmpty ? 0 : ordered[ordered.count / 2]
    }
}
