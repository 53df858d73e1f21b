import RosterRuntime
import RosterStorage

// The audit log in memory: an entry is appended in the same answer as the change it records, as a backend's
// transaction commits both.
extension InMemoryStorage {
    public func appendAudit(_ record: AuditRecord, charge: QueueCharge, completion: @escaping StorageCompletion<AuditEntry>) {
        answer(.appendAudit, completion) {
            guard self.hasRoom(for: 1) else { return .failure(.full) }
            return .success(self.append(record))
        }
    }

    public func auditEntries(_ query: AuditQuery, charge: QueueCharge, completion: @escaping StorageCompletion<[AuditEntry]>) {
        answer(.auditEntries, completion) {
            let username = query.username.map(Self.noCase)
            let matching = self.auditLog.reversed().filter { entry in
                (username == nil || entry.record.username.map(Self.noCase) == username)
                    && (query.event == nil || entry.record.event == query.event)
                    && (query.sinceMs.map { entry.timeMs >= $0 } ?? true)
                    && (query.beforeID.map { entry.id < $0 } ?? true)
            }
            return .success(Array(matching.prefix(max(0, query.limit))))
        }
    }

    public func pruneAudit(before beforeMs: Int64, charge: QueueCharge, completion: @escaping StorageCompletion<Int>) {
        answer(.pruneAudit, completion) {
            let before = self.auditLog.count
            self.auditLog.removeAll { $0.timeMs < beforeMs }
            return .success(before - self.auditLog.count)
        }
    }

    /// Appends `record` when there is one (a write's entry), in the answer that makes the write.
    func audited(_ record: AuditRecord?) {
        if let record { _ = append(record) }
    }

    private func append(_ record: AuditRecord) -> AuditEntry {
        let entry = AuditEntry(id: nextAuditID, timeMs: clock.nowMs(), record: record)
        nextAuditID += 1
        auditLog.append(entry)
        onAudit?(entry, .here)
        return entry
    }
}
