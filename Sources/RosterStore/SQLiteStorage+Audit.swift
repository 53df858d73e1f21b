import RosterRuntime
import RosterStorage

// SKELETON (issue 16, audit): every call fails until the backend's audit table lands. Not to ship as it is.
extension SQLiteStorage: AuditStorage {
    public func appendAudit(_ record: AuditRecord, charge: QueueCharge, completion: @escaping StorageCompletion<AuditEntry>) {
        completion(.failure(.other))
    }

    public func auditEntries(_ query: AuditQuery, charge: QueueCharge, completion: @escaping StorageCompletion<[AuditEntry]>) {
        completion(.failure(.other))
    }

    public func pruneAudit(before beforeMs: Int64, charge: QueueCharge, completion: @escaping StorageCompletion<Int>) {
        completion(.failure(.other))
    }
}
