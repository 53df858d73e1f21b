import RosterRuntime
import RosterStorage

// Accounts, session tokens and failed log-ins. Reads are point reads on the loop's connection (a username
// from the directory once it is warm); writes are forced jobs on the workers, since each follows a hash or a
// verification already paid for, except a resume, which a budget may refuse.

extension SQLiteStorage: UsernameDirectoryStorage {
    /// From the directory when it can tell (no work is queued), from the database otherwise.
    public func isUsernameTaken(_ canonical: String, charge: QueueCharge, completion: @escaping StorageCompletion<Bool>) {
        if let taken = knownUsernameTaken(canonical) { return completion(.success(taken)) }
        readUsernameTaken(canonical, charge: charge, completion: completion)
    }

    /// A point read on the loop's connection, while the directory is not warm.
    func readUsernameTaken(_ canonical: String, charge: QueueCharge, completion: @escaping StorageCompletion<Bool>) {
        read("user database read", completion) { () throws(StoreError) in try users.usernameExists(canonical) }
    }

    public func isEmailTaken(_ canonical: String, charge: QueueCharge, completion: @escaping StorageCompletion<Bool>) {
        read("user database read", completion) { () throws(StoreError) in try users.emailExists(canonical) }
    }

    public func accountExists(_ identifier: AccountIdentifier, charge: QueueCharge,
                       completion: @escaping StorageCompletion<Bool>) {
        read("user database read", completion) { () throws(StoreError) in try user(identifier) != nil }
    }

    public func credential(for identifier: AccountIdentifier, charge: QueueCharge,
                    completion: @escaping StorageCompletion<Credential?>) {
        read("user database read", completion) { () throws(StoreError) in
            switch identifier {
            case .username(let canonical): try users.credential(canonical: canonical)
            case .email(let email): try users.credential(email: email)
            }
        }
    }

    public func createAccount(_ new: NewAccount, audit: AuditRecord?, mail: [QueuedMail], charge: QueueCharge,
                              completion: @escaping StorageCompletion<Account>) {
        auditedWrite(charge, force: true, "registration", audit: audit, mail: WriteMail(mails: mail, account: { $0.id }),
                     { database, now in
            Account(try UserStore(database: database).insertUser(canonical: new.username, display: new.display,
                                                                 email: new.email, passwordHash: new.passwordHash,
                                                                 createdAt: now))
        }, completion: { [weak self] result in
            if case .success(let account) = result { self?.usernames.add(account.username) }
            completion(result)
        })
    }

    public func replacePasswordHash(_ hash: String, of account: AccountID, charge: QueueCharge,
                             completion: @escaping StorageCompletion<Void>) {
        let logger = self.logger
        work(charge, force: true, { worker in
            do {
                let store = UserStore(database: try worker.database())
                try worker.writeTurn.take { () throws(UserStoreError) in try store.updatePasswordHash(userID: account, hash: hash) }
                return .success(())
            } catch {
                return .failure(storageFailure(error, "password hash upgrade", logging: logger))
            }
        }, completion: completion)
    }

    private func user(_ identifier: AccountIdentifier) throws(StoreError) -> UserRecord? {
        switch identifier {
        case .username(let canonical): try users.user(canonical: canonical)
        case .email(let email): try users.user(email: email)
        }
    }
}

extension SQLiteStorage {
    public func storeToken(hash: [UInt8], for account: AccountID, client: String?, audit: AuditRecord?, limit: TokenLimit?,
                    charge: QueueCharge, completion: @escaping StorageCompletion<[[UInt8]]>) {
        // The revocations' entry commits before the log-in's, in the same transaction.
        auditedWrite(charge, force: true, "user database write", audit: audit, { database, now in
            let revoked = try SessionTokenStore(database: database).insert(tokenHash: hash, userID: account, client: client,
                                                                           now: now, maxTokens: limit?.maxTokens)
            guard !revoked.isEmpty, let revocation = limit?.revocation else { return PushedOut(hashes: revoked, entry: nil) }
            return PushedOut(hashes: revoked, entry: try AuditLogStore(database: database).append(revocation, at: now))
        }, completion: { [weak self] result in
            if case .success(let pushed) = result, let entry = pushed.entry { self?.onAudit?(entry, .here) }
            completion(result.map(\.hashes))
        })
    }

    public func resumeToken(hash: [UInt8], idleLimitMs: Int64, audit: AuditRecord?, charge: QueueCharge,
                     completion: @escaping StorageCompletion<Account?>) {
        // A resume writes too: it moves the token's last use. Only an unlocked account's resume is an entry, named
        // as that account.
        auditedWrite(charge, "user database write", audit: audit, rule: .resumed, { database, now in
            try SessionTokenStore(database: database).resume(tokenHash: hash, now: now, idleLimitMs: idleLimitMs)
                .map(Account.init)
        }, completion: completion)
    }

    public func revokeToken(hash: [UInt8], audit: AuditRecord?, charge: QueueCharge, completion: @escaping StorageCompletion<Bool>) {
        auditedWrite(charge, force: true, "user database write", audit: audit, rule: .whenTrue, { database, _ in
            try SessionTokenStore(database: database).revoke(tokenHash: hash)
        }, completion: completion)
    }
}

extension SQLiteStorage {
    public func recentFailures(keys: [String], windowMs: Int64, charge: QueueCharge,
                        completion: @escaping StorageCompletion<RecentFailures>) {
        let now = clock.nowMs()
        // The window's first millisecond, as `LoginRateLimit.windowStart` counts it.
        let since = Saturating.subtract(now, Saturating.subtract(windowMs, 1))
        read("rate-limit read", completion) { () throws(StoreError) in
            var times: [String: [Int64]] = [:]
            for key in keys { times[key] = try failures.failureTimes(key: key, since: since) }
            return RecentFailures(nowMs: now, times: times)
        }
    }

    public func recordFailure(keys: [String], audit: AuditRecord?, charge: QueueCharge, completion: @escaping StorageCompletion<Void>) {
        auditedWrite(charge, force: true, "user database write", audit: audit, { database, now in
            try LoginFailureStore(database: database).record(keys: keys, at: now)
        }, completion: completion)
    }
}

extension Account {
    /// The account of a stored record, without its hash.
    init(_ record: UserRecord) {
        self.init(id: record.id, username: record.canonical, display: record.display, email: record.email,
                  createdAtMs: record.createdAt, locked: record.locked, emailVerified: record.emailVerified)
    }
}

/// The tokens a new one pushed out, and the entry that recorded it.
struct PushedOut: Sendable {
    let hashes: [[UInt8]]
    let entry: AuditEntry?
}
