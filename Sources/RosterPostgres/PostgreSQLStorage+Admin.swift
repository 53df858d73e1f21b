import RosterCore
import RosterRuntime
import RosterStorage

// The administrator's calls (protocol.md §Administering users), each one round trip. A lock and a reset are forced (the protocol says they
// are never refused); a lock is announced as `sessionsEnded` in the statement that makes it.
extension PostgreSQLStorage {
    public func listAccounts(matching query: String?, limit: Int, offset: Int, charge: QueueCharge,
                      completion: @escaping StorageCompletion<AccountPage>) {
        let query = query ?? ""
        guard PGText.storable(query) else { return completion(.success(AccountPage(items: [], total: 0))) }
        self.query(PostgreSQLQueries.listAccounts(matching: query, limit: limit, offset: offset), transaction: true,
                   charge: charge, "account list") { result in
            completion(result.map { results in
                AccountPage(items: results.first?.rows.compactMap(Self.summary) ?? [],
                            total: Int(results.last?.rows.first?.int(0) ?? 0))
            })
        }
    }

    public func accountSummary(_ identifier: AccountIdentifier, charge: QueueCharge,
                        completion: @escaping StorageCompletion<AccountSummary?>) {
        let key = switch identifier {
        case .username(let name): name
        case .email(let email): email
        }
        guard PGText.storable(key) else { return completion(.success(nil)) }
        query(PostgreSQLQueries.accountSummary(identifier), charge: charge, "account summary") { result in
            completion(result.map { $0.rows.first.flatMap(Self.summary) })
        }
    }

    public func lockAccount(_ account: AccountID, reason: String?, audit: AuditRecord?, charge: QueueCharge,
                     completion: @escaping StorageCompletion<Bool>) {
        guard PGText.storable(reason) else { return completion(.failure(unstorable("account lock"))) }
        let audit = auditWrite(audit)
        let statement = PostgreSQLQueries.lockAccount(account, reason: reason, now: now,
                                                      notification: notification(.sessionsEnded(account: account)),
                                                      audit: audit)
        query(statement, charge: charge, force: true, "account lock") { [weak self] result in
            if case .success(let locked) = result { self?.committed(audit, locked) }
            completion(result.map { !$0.rows.isEmpty })
        }
    }

    public func unlockAccount(_ account: AccountID, audit: AuditRecord?, charge: QueueCharge, completion: @escaping StorageCompletion<Bool>) {
        let audit = auditWrite(audit)
        query(PostgreSQLQueries.unlockAccount(account, now: now, audit: audit), charge: charge,
              "account unlock") { [weak self] result in
            if case .success(let unlocked) = result { self?.committed(audit, unlocked) }
            completion(result.map { !$0.rows.isEmpty })
        }
    }

    public func resetFailures(keys: [String], audit: AuditRecord?, charge: QueueCharge, completion: @escaping StorageCompletion<Void>) {
        guard PGText.storable(keys.joined()) else { return completion(.failure(unstorable("failure reset"))) }
        let audit = auditWrite(audit)
        query(PostgreSQLQueries.resetFailures(keys: keys, now: now, audit: audit), charge: charge, force: true,
              "failure reset") { [weak self] result in
            if case .success(let reset) = result { self?.committed(audit, reset) }
            completion(result.map { _ in () })
        }
    }

    /// A row of `summaryColumns`.
    private static func summary(_ row: PGRow) -> AccountSummary? {
        guard let id = row.int(0), let canonical = row.text(1), let display = row.text(2), let createdAt = row.int(4) else {
            return nil
        }
        let lockedAt = row.int(6)
        return AccountSummary(account: Account(id: id, username: canonical, display: display, email: row.text(3),
                                               createdAtMs: createdAt, locked: lockedAt != nil,
                                               emailVerified: row.bool(9) ?? false),
                              lastLoginAtMs: row.int(5), lockedAtMs: lockedAt, lockedReason: row.text(7),
                              totp: row.bool(8) ?? false)
    }
}
