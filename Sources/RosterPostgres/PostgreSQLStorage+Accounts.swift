import RosterCore
import RosterRuntime
import RosterStorage

// Accounts, session tokens and failed log-ins: each call one statement (a resume, one transaction of two), in
// one round trip. Writes that follow a hash or a verification already paid for are never refused by the
// pool's budget; reads and a resume may be.

extension PostgreSQLStorage: UsernameDirectoryStorage {
    /// From the directory when it can tell (no work is queued), from the database otherwise.
    public func isUsernameTaken(_ canonical: String, charge: QueueCharge, completion: @escaping StorageCompletion<Bool>) {
        if let taken = knownUsernameTaken(canonical) { return completion(.success(taken)) }
        readUsernameTaken(canonical, charge: charge, completion: completion)
    }

    /// One statement, while the directory is not in; once it is, the directory answers, also while the database
    /// is down.
    func readUsernameTaken(_ canonical: String, charge: QueueCharge, completion: @escaping StorageCompletion<Bool>) {
        query(PostgreSQLQueries.usernameTaken(canonical), charge: charge, "username check") { result in
            completion(result.map { $0.rows.first?.bool(0) ?? false })
        }
    }

    public func isEmailTaken(_ canonical: String, charge: QueueCharge, completion: @escaping StorageCompletion<Bool>) {
        query(PostgreSQLQueries.emailTaken(canonical), charge: charge, "email check") { result in
            completion(result.map { $0.rows.first?.bool(0) ?? false })
        }
    }

    public func accountExists(_ identifier: AccountIdentifier, charge: QueueCharge,
                       completion: @escaping StorageCompletion<Bool>) {
        credential(for: identifier, charge: charge) { result in completion(result.map { $0 != nil }) }
    }

    public func credential(for identifier: AccountIdentifier, charge: QueueCharge,
                    completion: @escaping StorageCompletion<Credential?>) {
        query(PostgreSQLQueries.user(identifier), charge: charge, "account read") { result in
            completion(result.map { $0.rows.first.flatMap(Self.credential) })
        }
    }

    public func createAccount(_ new: NewAccount, audit: AuditRecord?, mail: [QueuedMail], charge: QueueCharge,
                              completion: @escaping StorageCompletion<Account>) {
        guard !stopped else { return completion(.failure(StorageFailure.stopped)) }
        guard StoredPasswordHash.isStorable(new.passwordHash) else {
            return completion(.failure(StoredPasswordHash.refusal(logging: logger)))
        }
        guard PGText.storable(new.username, new.display, new.email) else {
            return completion(.failure(unstorable("registration")))
        }
        guard storable(mail) else { return completion(.failure(unstorable("registration"))) }
        insertAccount(new, audit: auditWrite(audit), mail: mail, charge: charge, attempt: 1, completion: completion)
    }

    /// One attempt at the insert; a clash names its field (the username first, as the form checks it first).
    /// A clash with an account gone by the time the field is looked up (deleted meanwhile) tries once more.
    private func insertAccount(_ new: NewAccount, audit: AuditWrite?, mail: [QueuedMail], charge: QueueCharge,
                               attempt: Int, completion: @escaping StorageCompletion<Account>) {
        let created = notification(.accountCreated(username: new.username, email: new.email))
        // A new account's mails are the registration's alone: no other write can queue for it before this commits.
        let mailAudit = mailAudit(audit, mail, in: .registered(username: new.username))
        let insert = PostgreSQLQueries.createAccount(new, now: now, notification: created, audit: audit, mail: mail)
        query([insert] + (mailAudit.map { [$0.statement] } ?? []), transaction: mailAudit != nil, charge: charge,
              force: true, "registration") { [weak self] result in
            guard let self else { return completion(.failure(StorageFailure.stopped)) }
            switch result {
            case .failure(let failure):
                completion(.failure(failure))
            case .success(let results):
                guard let inserted = results.first else { return completion(.failure(.other)) }
                if let row = inserted.rows.first, let id = row.int(0), let createdAt = row.int(1) {
                    self.usernames.add(new.username)
                    self.committed(audit, inserted)
                    self.committed(mailAudit, results)
                    return completion(.success(Account(id: id, username: new.username, display: new.display,
                                                       email: new.email, createdAtMs: createdAt)))
                }
                self.query(PostgreSQLQueries.clash(new), charge: charge, force: true, "registration") { [weak self] result in
                    guard let self else { return completion(.failure(StorageFailure.stopped)) }
                    switch result {
                    case .failure(let failure):
                        completion(.failure(failure))
                    case .success(let clash):
                        let row = clash.rows.first
                        if row?.bool(0) == true { return completion(.failure(.conflict(.username))) }
                        if row?.bool(1) == true { return completion(.failure(.conflict(.email))) }
                        guard attempt < 2 else { return completion(.failure(.conflict(.username))) }
                        self.insertAccount(new, audit: audit, mail: mail, charge: charge, attempt: attempt + 1,
                                           completion: completion)
                    }
                }
            }
        }
    }

    public func replacePasswordHash(_ hash: String, of account: AccountID, charge: QueueCharge,
                             completion: @escaping StorageCompletion<Void>) {
        guard !stopped else { return completion(.failure(StorageFailure.stopped)) }
        guard StoredPasswordHash.isStorable(hash) else {
            return completion(.failure(StoredPasswordHash.refusal(logging: logger)))
        }
        let logger = self.logger
        query(PostgreSQLQueries.replacePasswordHash(hash, of: account), charge: charge, force: true,
              "password hash upgrade") { result in
            completion(result.flatMap { updated in
                guard updated.affectedRows > 0 else {
                    logger.error("password hash upgrade failed: account \(account) is not there")
                    return .failure(.other)
                }
                return .success(())
            })
        }
    }

    /// A credential from `PostgreSQLQueries.userColumns`, with its TOTP when the row goes on with
    /// `credentialColumns`' two.
    static func credential(_ row: PGRow) -> Credential? {
        guard let id = row.int(0), let canonical = row.text(1), let display = row.text(2), let hash = row.text(4),
              let createdAt = row.int(5) else { return nil }
        return Credential(account: Account(id: id, username: canonical, display: display, email: row.text(3),
                                           createdAtMs: createdAt, locked: row.bool(8) ?? false,
                                           emailVerified: row.bool(9) ?? false),
                          passwordHash: hash, totp: row.bytes(6).map { TOTPSeal(sealed: $0, lastStep: row.int(7)) })
    }
}

extension PostgreSQLStorage {
    public func storeToken(hash: [UInt8], for account: AccountID, client: String?, audit: AuditRecord?, limit: TokenLimit?,
                    charge: QueueCharge, completion: @escaping StorageCompletion<[[UInt8]]>) {
        // A client name PostgreSQL's text cannot hold (a NUL) is left out rather than failing the log-in.
        let client = client.flatMap { PGText.storable($0) ? $0 : nil }
        let audit = auditWrite(audit)
        guard let limit else {
            query(PostgreSQLQueries.storeToken(hash, for: account, client: client, now: now, audit: audit), charge: charge,
                  force: true, "session token write") { [weak self] result in
                if case .success(let stored) = result { self?.committed(audit, stored) }
                completion(result.map { _ in [] })
            }
            return
        }
        // The account's row is locked first, so two daemons storing its tokens at once count one after the other.
        let revocation = auditWrite(limit.revocation)
        let statements = [PostgreSQLQueries.lockAccount(account),
                          PostgreSQLQueries.pushOutTokens(of: account, keeping: limit.maxTokens - 1, sparing: hash,
                                                          announcing: tokenRevokedPrefix, now: now, audit: revocation),
                          PostgreSQLQueries.storeToken(hash, for: account, client: client, now: now, audit: audit)]
        query(statements, transaction: true, charge: charge, force: true, "session token write") { [weak self] result in
            completion(result.map { results in
                let pushed = results.count == 3 ? results[1] : nil
                self?.committed(revocation, pushed)
                self?.committed(audit, results.last)
                return pushed?.rows.compactMap { $0.bytes(0) } ?? []
            })
        }
    }

    public func resumeToken(hash: [UInt8], idleLimitMs: Int64, audit: AuditRecord?, charge: QueueCharge,
                     completion: @escaping StorageCompletion<Account?>) {
        // The statement names the entry as the account it resumed; the others read that row by its id.
        let audit = audit.map { AuditWrite($0, origin: origin, announcedByID: $0.username == nil) }
        query(PostgreSQLQueries.resumeToken(hash, idleLimitMs: idleLimitMs, now: now, audit: audit), transaction: true,
              charge: charge, "session resume") { [weak self] result in
            if case .success(let results) = result {
                self?.committed(audit, results.last, naming: results.last?.rows.first?.text(1))
            }
            completion(result.map { results in
                guard let row = results.last?.rows.first, let id = row.int(0), let canonical = row.text(1),
                      let display = row.text(2), let createdAt = row.int(4) else { return nil }
                return Account(id: id, username: canonical, display: display, email: row.text(3), createdAtMs: createdAt,
                               locked: row.bool(5) ?? false, emailVerified: row.bool(6) ?? false)
            })
        }
    }

    public func revokeToken(hash: [UInt8], audit: AuditRecord?, charge: QueueCharge, completion: @escaping StorageCompletion<Bool>) {
        let revoked = notification(.tokenRevoked(hash: hash))
        let audit = auditWrite(audit)
        query(PostgreSQLQueries.revokeToken(hash, notification: revoked, now: now, audit: audit), charge: charge,
              force: true, "session token revocation") { [weak self] result in
            if case .success(let gone) = result { self?.committed(audit, gone) }
            completion(result.map { !$0.rows.isEmpty })
        }
    }
}

extension PostgreSQLStorage {
    public func recentFailures(keys: [String], windowMs: Int64, charge: QueueCharge,
                        completion: @escaping StorageCompletion<RecentFailures>) {
        query(PostgreSQLQueries.recentFailures(keys: keys, windowMs: windowMs, now: now), charge: charge,
              "rate-limit read") { result in
            completion(result.flatMap { found in
                guard let nowMs = found.rows.first?.int(0) else { return .failure(.other) }
                var times: [String: [Int64]] = [:]
                for key in keys { times[key] = [] }
                for row in found.rows {
                    guard let key = row.text(1), let at = row.int(2) else { continue }
                    times[key, default: []].append(at)
                }
                return .success(RecentFailures(nowMs: nowMs, times: times))
            })
        }
    }

    public func recordFailure(keys: [String], audit: AuditRecord?, charge: QueueCharge, completion: @escaping StorageCompletion<Void>) {
        guard !stopped else { return completion(.failure(StorageFailure.stopped)) }
        guard !keys.isEmpty || audit != nil else { return completion(.success(())) }
        let audit = auditWrite(audit)
        query(PostgreSQLQueries.recordFailure(keys: keys, now: now, audit: audit), charge: charge, force: true,
              "log-in failure write") { [weak self] result in
            if case .success(let recorded) = result { self?.committed(audit, recorded) }
            completion(result.map { _ in () })
        }
    }
}
