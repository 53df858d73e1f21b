import Glibc
import RosterProtocol
import RosterRuntime
import RosterStorage

/// `rosterd --copy-database FROM TO`: every row of one database into another, empty one, offline, whichever the
/// backends. The ends are opened by the composition root (`DaemonStorage`); this only drives the protocols.
public enum DatabaseCopy {
    /// How far a copy has come.
    public struct Progress: Equatable, Sendable {
        /// Rows written to the target so far, in the copy's one transaction there.
        public var copied: CopyCounts
        /// The source's rows as counted before the copy.
        public var total: CopyCounts
    }

    /// Rows per batch: small enough to hold in memory; all of them are one transaction on the target.
    public static let defaultBatchSize = 1_000

    /// Refuses a target that holds any row, copies the source's rows in batches and its key check value, finishes
    /// the target, and compares both ends' counts (the source's read again at the end). Returns the counts copied.
    public static func run(from source: any CopySource, to target: any CopyTarget, batchSize: Int = defaultBatchSize,
                           progress: (Progress) -> Void = { _ in }) throws(CopyError) -> CopyCounts {
        let existing = try target.counts()
        guard existing.total == 0 else { throw .targetNotEmpty(existing) }
        let total = try source.counts()
        var copied = CopyCounts()
        try source.readAll(batchSize: batchSize) { (batch: CopyBatch) throws(CopyError) in
            try target.write(batch)
            copied.add(batch)
            progress(Progress(copied: copied, total: total))
        }
        if let keyCheck = try source.keyCheckValue() { try target.storeKeyCheckValue(keyCheck) }
        try target.finish()
        let sourceCounts = try source.counts()
        let targetCounts = try target.counts()
        guard sourceCounts == targetCounts else { throw .countsDiffer(source: sourceCounts, target: targetCounts) }
        return targetCounts
    }
}

extension Daemon {
    /// `--copy-database FROM TO`: 0 when every row is in the target and the counts agree, 1 otherwise, with the
    /// reason on stderr. Progress goes to stderr only when it is a terminal; the summary line always to stdout.
    public static func copyDatabase(from: DatabaseEndpoint, to: DatabaseEndpoint) -> Int32 {
        func say(_ text: String) { writeToStandardError("rosterd: \(LogText.escaped(text))\n") }
        guard from != to else {
            say("--copy-database: \(from) is both the source and the target")
            return 1
        }
        let started = CoreSharing.monotonicNs()
        let onTerminal = isatty(2) == 1
        var lastShown: UInt64 = 0
        do throws(CopyError) {
            let source = try DaemonStorage.copySource(from)
            let target = try DaemonStorage.copyTarget(to)
            let counts = try DatabaseCopy.run(from: source, to: target) { progress in
                guard onTerminal else { return }
                let now = CoreSharing.monotonicNs()
                // A redraw every 100 ms at most: a million rows are a thousand batches.
                guard now - lastShown >= 100_000_000 || progress.copied == progress.total else { return }
                lastShown = now
                writeToStandardError("\r\u{1B}[Kcopying: \(progress.copied.total) of \(progress.total.total) rows "
                                     + "(\(progress.copied))")
            }
            if onTerminal { writeToStandardError("\r\u{1B}[K") }
            let seconds = Double((CoreSharing.monotonicNs() - started) / 1_000_000) / 1_000
            print(LogText.escaped("copied \(counts) from \(from) to \(to) in \(seconds) s; the counts agree"))
            return 0
        } catch {
            if onTerminal { writeToStandardError("\n") }
            switch error {
            case .targetNotEmpty: say("copy refused: \(to): \(error)")
            case .failed: say("copy from \(from) to \(to) failed: \(error)")
            case .countsDiffer:
                // A PostgreSQL source is read in one snapshot while daemons may go on writing to it.
                say("copy from \(from) to \(to) failed: \(error); stop every daemon on the source, empty the "
                    + "target, and copy again")
            }
            return 1
        }
    }
}
