import RosterRuntime
import RosterStorage

// The audit log (protocol.md §The audit log). A write's entry is inserted by the write's own statement (`PostgreSQLQueries.audited`)
// and announced in its transaction; once the answer is back (committed), this instance hands the entry to `onAudit`
// as `.here`, and its listener drops the echo. The other daemons' entries come through the listener as `.elsewhere`:
// whole in the payload, or, for an entry too large for one, by id and read here. Entries announced while the
// listener was disconnected are not heard (they are in the table, for `auditEntries`).
extension PostgreSQLStorage {
    /// Rows one pruning statement deletes at most.
    static let pruneBatch = 10_000

    public func appendAudit(_ record: AuditRecord, charge: QueueCharge, completion: @escaping StorageCompletion<AuditEntry>) {
        let write = AuditWrite(record, origin: origin)
        query(PostgreSQLQueries.appendAudit(write, now: now), charge: charge, force: true, "audit entry write") { [weak self] result in
            guard let self else { return completion(.failure(StorageFailure.stopped)) }
            completion(result.flatMap { inserted in
                guard let entry = self.committed(write, inserted) else { return .failure(.other) }
                return .success(entry)
            })
        }
    }

    public func auditEntries(_ query: AuditQuery, charge: QueueCharge, completion: @escaping StorageCompletion<[AuditEntry]>) {
        guard PGText.storable(query.username) else { return completion(.success([])) }
        self.query(PostgreSQLQueries.auditEntries(query), charge: charge, "audit log read") { result in
            completion(result.map { $0.rows.compactMap { $0.auditEntry() } })
        }
    }

    public func pruneAudit(before beforeMs: Int64, charge: QueueCharge, completion: @escaping StorageCompletion<Int>) {
        pruneAudit(before: beforeMs, charge: charge, pruned: 0, completion: completion)
    }

    /// One batch, then the next while batches come back full.
    private func pruneAudit(before beforeMs: Int64, charge: QueueCharge, pruned: Int,
                            completion: @escaping StorageCompletion<Int>) {
        query(PostgreSQLQueries.pruneAudit(before: beforeMs, limit: Self.pruneBatch), charge: charge, force: true,
              "audit log pruning") { [weak self] result in
            switch result {
            case .failure(let failure):
                completion(.failure(failure))
            case .success(let deleted):
                let total = pruned + deleted.affectedRows
                guard let self, deleted.affectedRows >= Self.pruneBatch else { return completion(.success(total)) }
                self.pruneAudit(before: beforeMs, charge: charge, pruned: total, completion: completion)
            }
        }
    }

    // MARK: This instance's entries

    /// The entry as a write of this instance inserts and announces it.
    func auditWrite(_ record: AuditRecord?) -> AuditWrite? {
        record.map { AuditWrite($0, origin: origin) }
    }

    /// After a write committed: its entry (the stamp its result's first row ends with, when the insert ran) goes
    /// to `onAudit` as this daemon's, and is answered; `naming` is the username the statement filled in, when the
    /// record named no one.
    @discardableResult
    func committed(_ write: AuditWrite?, _ result: PGResult?, naming: String? = nil) -> AuditEntry? {
        guard let write, let stamp = result?.rows.first?.auditStamp else { return nil }
        let entry = AuditEntry(id: stamp.id, timeMs: stamp.timeMs, record: write.record.named(naming))
        onAudit?(entry, .here)
        return entry
    }

    // MARK: The others' entries

    /// An audit announcement heard by the listener: another daemon's entry goes to `onAudit` as `.elsewhere`.
    func heardAudit(_ payload: String) {
        let origin: String
        let heard: AuditNotification.Heard
        do throws(ChangeNotification.ParseFailure) {
            (origin, heard) = try AuditNotification.parse(payload)
        } catch {
            logger.warning("ignored an audit notification that this rosterd does not understand (\(error))")
            return
        }
        guard origin != self.origin else { return }
        switch heard {
        case .entry(let entry):
            onAudit?(entry, .elsewhere)
        case .stored(let id):
            // Not forced: following is best effort under load, and the entry stays in the log whatever happens here.
            query(PostgreSQLQueries.auditEntry(id), charge: .daemon, "audit entry read") { [weak self] result in
                guard let self, !self.stopped else { return }
                switch result {
                case .success(let found):
                    // Gone (pruned already), or an event this rosterd does not know: nothing to tell.
                    guard let entry = found.rows.first?.auditEntry() else { return }
                    self.onAudit?(entry, .elsewhere)
                case .failure:
                    self.logger.warning("cannot read audit entry \(id) announced by another rosterd; it stays in the log")
                }
            }
        }
    }
}
