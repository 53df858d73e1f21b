/// Clock arithmetic that clamps instead of trapping, because times and limits come from callers
/// and configuration, and a bad value must not crash the daemon.
enum Saturating {
    /// `a - b`, clamped to Int64's range.
    static func subtract(_ a: Int64, _ b: Int64) -> Int64 {
        let (result, overflow) = a.subtractingReportingOverflow(b)
        guard overflow else { return result }
        return b > 0 ? Int64.min : Int64.max
    }

    /// `a + b`, clamped to Int64's range.
    static func add(_ a: Int64, _ b: Int64) -> Int64 {
        let (result, overflow) = a.addingReportingOverflow(b)
        guard overflow else { return result }
        return b > 0 ? Int64.max : Int64.min
    }
}
