import RosterRuntime
import RosterStorage

/// `admin.backup` for a backend whose database is not a local file (PostgreSQL): its snapshot, written as a
/// standalone SQLite database that `rosterd` on SQLite serves as it is, under the rules of `Database.backup(to:)`
/// (the same refusals, a partial file renamed into place only once complete, checked and fsynced).
public struct SQLiteSnapshotWriter: SnapshotWriter {
    /// Rows per batch read from the source and per transaction on the copy.
    static let batchSize = 1_000
    private let clock: any WallClock

    /// `clock` stamps the copy's migrations.
    public init(clock: any WallClock = SystemWallClock()) {
        self.clock = clock
    }

    public func write(from openSource: () throws(CopyError) -> any SnapshotSource, to path: String,
                      logger: Logger) -> Result<BackupSummary, BackupFailure> {
        do throws(BackupError) {
            return .success(try snapshot(from: openSource, to: path))
        } catch {
            return .failure(error.backupFailure(logging: logger, path: path))
        }
    }

    /// The target is checked before the source is opened, so a bad path costs no connection; the copy must hold
    /// exactly the rows the snapshot counted, or it is not published.
    func snapshot(from openSource: () throws(CopyError) -> any SnapshotSource,
                  to path: String) throws(BackupError) -> BackupSummary {
        let now = clock.nowMs()
        return try Database.publishedCopy(to: path, live: nil) { destination throws(BackupError) in
            let source: any SnapshotSource
            do throws(CopyError) { source = try openSource() } catch { throw .source(error) }
            let target = try Database.storing { () throws(StoreError) in try SQLiteCopy.partial(destination, now: now) }
            var expected = CopyCounts()
            var written = CopyCounts()
            // The target's own failures (a full disk) are kept apart from the source's: they map differently.
            var targetFailure: StoreError?
            do throws(CopyError) {
                try source.readSnapshot(batchSize: Self.batchSize, counted: { expected = $0 }) { batch throws(CopyError) in
                    do throws(StoreError) {
                        try target.insert(batch)
                    } catch {
                        targetFailure = error
                        throw .failed("the copy could not be written")
                    }
                    written.add(batch)
                }
            } catch {
                if let targetFailure { throw .store(targetFailure) }
                throw .source(error)
            }
            let stored = try Database.storing { () throws(StoreError) in try target.storedCounts() }
            guard written == expected, stored == expected else {
                throw .source(.countsDiffer(source: expected, target: stored))
            }
            return try Database.storing { () throws(StoreError) in
                Int(try destination.pragmaValue("PRAGMA page_count") ?? "0") ?? 0
            }
        }
    }
}
