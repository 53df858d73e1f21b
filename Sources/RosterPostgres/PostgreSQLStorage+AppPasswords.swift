import RosterCore
import RosterRuntime
import RosterStorage

// App passwords (protocol.md "App passwords"): each call one round trip, an addition's after the account's lock
// in one transaction. A removal and a log-in's last use are forced (a leaked secret must be removable; a use
// follows an accepted log-in); the list and an addition the pool's budget may refuse.
extension PostgreSQLStorage {
    public func appPasswords(of account: AccountID, charge: QueueCharge,
                             completion: @escaping StorageCompletion<[StoredAppPassword]>) {
        query(PostgreSQLQueries.appPasswords(of: account), charge: charge, "app password list") { result in
            completion(result.map { $0.rows.compactMap { $0.appPassword() } })
        }
    }

    public func addAppPassword(_ appPassword: StoredAppPassword, limit: Int, audit: AuditRecord?, charge: QueueCharge,
                               completion: @escaping StorageCompletion<AppPasswordAddition>) {
        guard !stopped else { return completion(.failure(StorageFailure.stopped)) }
        guard appPassword.isStorable else {
            logger.error("app password refused: an id of \(appPassword.id.unicodeScalars.count) characters or a bad hash")
            return completion(.failure(.other))
        }
        guard PGText.storable(appPassword.name), PGText.storable(appPassword.id) else {
            return completion(.failure(unstorable("app password creation")))
        }
        let audit = auditWrite(audit)
        let statements = [PostgreSQLQueries.lockAccountForMail(appPassword.account),
                          PostgreSQLQueries.addAppPassword(appPassword, limit: limit, now: now, audit: audit)]
        query(statements, transaction: true, charge: charge, "app password creation") { [weak self] result in
            completion(result.flatMap { results in
                guard let row = results.last?.rows.first, let verdict = row.text(0) else { return .failure(.other) }
                switch verdict {
                case "gone": return .success(.gone)
                case "full": return .success(.full)
                default:
                    guard let created = row.int(1) else { return .failure(.other) }
                    self?.committed(audit, results.last)
                    var stored = appPassword
                    stored.createdMs = created
                    stored.lastUsedMs = nil
                    return .success(.added(stored))
                }
            })
        }
    }

    public func removeAppPassword(of account: AccountID, id: String, audit: AuditRecord?, charge: QueueCharge,
                                  completion: @escaping StorageCompletion<Bool>) {
        guard PGText.storable(id) else { return completion(.success(false)) }
        let audit = auditWrite(audit)
        query([PostgreSQLQueries.removeAppPassword(of: account, id: id, now: now, audit: audit)], transaction: false,
              charge: charge, force: true, "app password removal") { [weak self] result in
            completion(result.map { all in
                guard let gone = all.last, !gone.rows.isEmpty else { return false }
                self?.committed(audit, gone)
                return true
            })
        }
    }

    public func touchAppPassword(of account: AccountID, id: String, usedMs: Int64, charge: QueueCharge,
                                 completion: @escaping StorageCompletion<Bool>) {
        guard PGText.storable(id) else { return completion(.success(false)) }
        query(PostgreSQLQueries.touchAppPassword(of: account, id: id, usedMs: usedMs), charge: charge, force: true,
              "app password use") { result in
            completion(result.map { !$0.rows.isEmpty })
        }
    }
}
