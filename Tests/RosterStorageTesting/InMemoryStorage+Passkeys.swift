import RosterRuntime
import RosterStorage

// Passkeys and user handles (protocol.md §Storage) on the in-memory rows, as the SQL backends keep them: each call
// is one transaction (it runs whole when answered), and what their CHECKs refuse is refused alike (`.other`).
extension InMemoryStorage {
    public func passkeyUserHandle(of account: AccountID, candidate: [UInt8], charge: QueueCharge,
                                  completion: @escaping StorageCompletion<[UInt8]?>) {
        answer(.passkeyUserHandle, completion) {
            guard PasskeyLimits.storedUserHandleBytes.contains(candidate.count) else { return .failure(.other) }
            guard self.accounts[account] != nil else { return .success(nil) }
            if let held = self.passkeyHandles[account] { return .success(held) }
            // The UNIQUE index on the handle: a candidate another account holds fails the write.
            guard !self.passkeyHandles.values.contains(candidate) else { return .failure(.other) }
            self.passkeyHandles[account] = candidate
            return .success(candidate)
        }
    }

    public func account(forUserHandle handle: [UInt8], charge: QueueCharge,
                        completion: @escaping StorageCompletion<Account?>) {
        answer(.accountForUserHandle, completion) {
            .success(self.passkeyHandles.first { $0.value == handle }.flatMap { self.accounts[$0.key]?.account })
        }
    }

    public func passkeys(of account: AccountID, charge: QueueCharge,
                         completion: @escaping StorageCompletion<[StoredPasskey]>) {
        answer(.passkeys, completion) {
            .success(self.passkeyRows.values.filter { $0.account == account }.sorted { a, b in
                a.createdMs != b.createdMs ? a.createdMs < b.createdMs
                    : a.credentialID.lexicographicallyPrecedes(b.credentialID)
            })
        }
    }

    public func passkey(credentialID: [UInt8], charge: QueueCharge,
                        completion: @escaping StorageCompletion<OwnedPasskey?>) {
        answer(.passkey, completion) {
            .success(self.passkeyRows[credentialID].flatMap { passkey in
                self.accounts[passkey.account].map { OwnedPasskey(passkey: passkey, account: $0.account) }
            })
        }
    }

    public func addPasskey(_ passkey: StoredPasskey, limit: Int, audit: AuditRecord?, charge: QueueCharge,
                           completion: @escaping StorageCompletion<PasskeyAddition>) {
        answer(.addPasskey, completion) {
            guard passkey.isStorable else { return .failure(.other) }
            guard self.accounts[passkey.account] != nil else { return .success(.gone) }
            guard self.passkeyRows[passkey.credentialID] == nil else { return .success(.duplicate) }
            guard self.passkeyRows.values.filter({ $0.account == passkey.account }).count < limit else {
                return .success(.full)
            }
            guard self.hasRoom(for: 1) else { return .failure(.full) }
            var stored = passkey
            stored.createdMs = self.clock.nowMs()
            stored.lastUsedMs = nil
            self.passkeyRows[stored.credentialID] = stored
            self.audited(audit)
            return .success(.added(stored))
        }
    }

    public func removePasskey(of account: AccountID, credentialID: [UInt8], audit: AuditRecord?, mail: [QueuedMail],
                              charge: QueueCharge, completion: @escaping StorageCompletion<Bool>) {
        answer(.removePasskey, completion) {
            guard self.passkeyRows[credentialID]?.account == account else { return .success(false) }
            self.passkeyRows[credentialID] = nil
            self.audited(audit, queuing: mail, for: account)
            return .success(true)
        }
    }

    public func usePasskey(credentialID: [UInt8], signCount: UInt32, usedMs: Int64, charge: QueueCharge,
                           completion: @escaping StorageCompletion<PasskeyUse>) {
        answer(.usePasskey, completion) {
            guard var passkey = self.passkeyRows[credentialID] else { return .success(.gone) }
            guard passkey.accepts(signCount: signCount) else { return .success(.counterWentBack(stored: passkey.signCount)) }
            passkey.signCount = signCount
            passkey.lastUsedMs = usedMs
            self.passkeyRows[credentialID] = passkey
            return .success(.used(passkey))
        }
    }

    /// Inside a deletion: the account's passkeys, handle and app passwords go with it (the foreign keys' cascade).
    func removePasskeys(of account: AccountID) {
        passkeyRows = passkeyRows.filter { $0.value.account != account }
        passkeyHandles[account] = nil
        appPasswordRows = appPasswordRows.filter { $0.value.account != account }
    }
}
