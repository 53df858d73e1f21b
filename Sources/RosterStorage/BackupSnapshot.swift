import RosterRuntime

/// A database read whole in one consistent snapshot, its row counts taken inside that same snapshot: what a
/// backup of a database that is not a local file reads (`admin.backup` on PostgreSQL).
public protocol SnapshotSource: AnyObject {
    /// Calls `counted` once with the snapshot's counts, then hands every row to `body` in batches of at most
    /// `batchSize`, in `CopySource.readAll`'s order (accounts first), all from that one snapshot.
    func readSnapshot(batchSize: Int, counted: (CopyCounts) throws(CopyError) -> Void,
                      _ body: (CopyBatch) throws(CopyError) -> Void) throws(CopyError)
}

/// Writes a snapshot as a standalone SQLite database at a path, under the rules of the SQLite backend's
/// `admin.backup`: the same refusals of the target, a partial file in the target's directory, and a rename into
/// place only once the copy is complete, checked and on disk. Blocking: call it off the loop.
public protocol SnapshotWriter: Sendable {
    /// `source` is opened by `openSource` on the calling thread, so that a blocking connection lives only as long as
    /// the backup; a source that cannot be opened fails the backup as the database being unreachable.
    func write(from openSource: () throws(CopyError) -> any SnapshotSource, to path: String,
               logger: Logger) -> Result<BackupSummary, BackupFailure>
}
