import RosterRuntime
import RosterStorage

// App passwords (protocol.md "App passwords") on the in-memory rows, as the SQL backends keep them: each call is
// one transaction (it runs whole when answered), and what their CHECKs refuse is refused alike (`.other`). They go
// with their account in `removePasskeys(of:)`, the cascade every deletion runs.
extension InMemoryStorage {
    public func appPasswords(of account: AccountID, charge: QueueCharge,
                             completion: @escaping StorageCompletion<[StoredAppPassword]>) {
        answer(.appPasswords, completion) {
            .success(self.appPasswordRows.values.filter { $0.account == account }.sorted { a, b in
                a.createdMs != b.createdMs ? a.createdMs < b.createdMs : a.id < b.id
            })
        }
    }

    public func addAppPassword(_ appPassword: StoredAppPassword, limit: Int, audit: AuditRecord?, charge: QueueCharge,
                               completion: @escaping StorageCompletion<AppPasswordAddition>) {
        answer(.addAppPassword, completion) {
            guard appPassword.isStorable else { return .failure(.other) }
            guard self.accounts[appPassword.account] != nil else { return .success(.gone) }
            guard self.appPasswordRows.values.filter({ $0.account == appPassword.account }).count < limit else {
                return .success(.full)
            }
            // The primary key: an id already stored fails the write.
            guard self.appPasswordRows[appPassword.id] == nil else { return .failure(.other) }
            guard self.hasRoom(for: 1) else { return .failure(.full) }
            var stored = appPassword
            stored.createdMs = self.clock.nowMs()
            stored.lastUsedMs = nil
            self.appPasswordRows[stored.id] = stored
            self.audited(audit)
            return .success(.added(stored))
        }
    }

    public func removeAppPassword(of account: AccountID, id: String, audit: AuditRecord?, charge: QueueCharge,
                                  completion: @escaping StorageCompletion<Bool>) {
        answer(.removeAppPassword, completion) {
            guard self.appPasswordRows[id]?.account == account else { return .success(false) }
            self.appPasswordRows[id] = nil
            self.audited(audit)
            return .success(true)
        }
    }

    public func touchAppPassword(of account: AccountID, id: String, usedMs: Int64, charge: QueueCharge,
                                 completion: @escaping StorageCompletion<Bool>) {
        answer(.touchAppPassword, completion) {
            guard var row = self.appPasswordRows[id], row.account == account else { return .success(false) }
            row.lastUsedMs = usedMs
            self.appPasswordRows[id] = row
            return .success(true)
        }
    }
}
