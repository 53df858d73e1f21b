import RosterCore
import RosterRuntime
import RosterStorage

// Passkeys and user handles (protocol.md §Storage): each call one round trip, an addition's after the account's
// lock in one transaction. A removal and a log-in's count are forced (each follows a password or a signature
// already verified); the reads, a handle and an addition the pool's budget may refuse.
extension PostgreSQLStorage {
    public func passkeyUserHandle(of account: AccountID, candidate: [UInt8], charge: QueueCharge,
                                  completion: @escaping StorageCompletion<[UInt8]?>) {
        guard !stopped else { return completion(.failure(StorageFailure.stopped)) }
        guard PasskeyLimits.storedUserHandleBytes.contains(candidate.count) else {
            logger.error("passkey user handle refused: a candidate of \(candidate.count) bytes")
            return completion(.failure(.other))
        }
        let logger = self.logger
        pool.execute(PostgreSQLQueries.passkeyUserHandle(of: account, candidate: candidate), transaction: true,
                     charge: charge) { result in
            switch result {
            case .failure(.server(sqlState: "23503", _)):
                // The account was deleted on another daemon between the statement's snapshot and its insert.
                completion(.success(nil))
            case .failure(let failure):
                completion(.failure(failure.storageFailure(logging: logger, "passkey user handle")))
            case .success(let results):
                completion(.success(results.last?.rows.first?.bytes(0)))
            }
        }
    }

    public func account(forUserHandle handle: [UInt8], charge: QueueCharge,
                        completion: @escaping StorageCompletion<Account?>) {
        query(PostgreSQLQueries.account(forUserHandle: handle), charge: charge, "passkey user handle read") { result in
            completion(result.map { $0.rows.first.flatMap(Self.credential)?.account })
        }
    }

    public func passkeys(of account: AccountID, charge: QueueCharge,
                         completion: @escaping StorageCompletion<[StoredPasskey]>) {
        query(PostgreSQLQueries.passkeys(of: account), charge: charge, "passkey list") { result in
            completion(result.map { $0.rows.compactMap { $0.passkey() } })
        }
    }

    public func passkey(credentialID: [UInt8], charge: QueueCharge,
                        completion: @escaping StorageCompletion<OwnedPasskey?>) {
        query(PostgreSQLQueries.passkey(credentialID: credentialID), charge: charge, "passkey read") { result in
            completion(result.map { found in
                found.rows.first.flatMap { row in
                    guard let owner = Self.credential(row)?.account, let passkey = row.passkey(from: 10) else { return nil }
                    return OwnedPasskey(passkey: passkey, account: owner)
                }
            })
        }
    }

    public func addPasskey(_ passkey: StoredPasskey, limit: Int, audit: AuditRecord?, charge: QueueCharge,
                           completion: @escaping StorageCompletion<PasskeyAddition>) {
        guard !stopped else { return completion(.failure(StorageFailure.stopped)) }
        guard passkey.isStorable else {
            logger.error("passkey refused: a credential id of \(passkey.credentialID.count) bytes or no key")
            return completion(.failure(.other))
        }
        guard PGText.storable(passkey.name) else { return completion(.failure(unstorable("passkey registration"))) }
        let audit = auditWrite(audit)
        let statements = [PostgreSQLQueries.lockAccountForMail(passkey.account),
                          PostgreSQLQueries.addPasskey(passkey, limit: limit, now: now, audit: audit)]
        query(statements, transaction: true, charge: charge, "passkey registration") { [weak self] result in
            completion(result.flatMap { results in
                guard let row = results.last?.rows.first, let verdict = row.text(0) else { return .failure(.other) }
                switch verdict {
                case "gone": return .success(.gone)
                case "duplicate": return .success(.duplicate)
                case "full": return .success(.full)
                default:
                    guard let created = row.int(1) else { return .failure(.other) }
                    self?.committed(audit, results.last)
                    var stored = passkey
                    stored.createdMs = created
                    stored.lastUsedMs = nil
                    return .success(.added(stored))
                }
            })
        }
    }

    public func removePasskey(of account: AccountID, credentialID: [UInt8], audit: AuditRecord?, mail: [QueuedMail],
                              charge: QueueCharge, completion: @escaping StorageCompletion<Bool>) {
        guard storable(mail) else { return completion(.failure(unstorable("passkey removal"))) }
        let audit = auditWrite(audit)
        let statement = PostgreSQLQueries.removePasskey(of: account, credentialID: credentialID, now: now, audit: audit,
                                                        mail: mail)
        let write = mailing(mail, for: account, [statement], audit: audit)
        query(write.statements, transaction: write.needsTransaction, charge: charge, force: true,
              "passkey removal") { [weak self] result in
            completion(result.map { all in
                guard let gone = write.own(all).last, !gone.rows.isEmpty else { return false }
                self?.committed(audit, gone)
                self?.committed(write.mailAudit, all)
                return true
            })
        }
    }

    public func usePasskey(credentialID: [UInt8], signCount: UInt32, usedMs: Int64, charge: QueueCharge,
                           completion: @escaping StorageCompletion<PasskeyUse>) {
        query(PostgreSQLQueries.usePasskey(credentialID: credentialID, signCount: signCount, usedMs: usedMs),
              charge: charge, force: true, "passkey log-in") { result in
            completion(result.flatMap { results in
                guard results.count == 2 else { return .failure(.other) }
                if let row = results[0].rows.first {
                    guard let passkey = row.passkey() else { return .failure(.other) }
                    return .success(.used(passkey))
                }
                guard let row = results[1].rows.first else { return .success(.gone) }
                guard let stored = row.int(0).flatMap(UInt32.init(exactly:)) else { return .failure(.other) }
                return .success(.counterWentBack(stored: stored))
            })
        }
    }
}
