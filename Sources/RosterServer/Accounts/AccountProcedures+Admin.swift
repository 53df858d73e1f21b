import RosterCore
import RosterRuntime
import RosterStorage

/// An account as `admin.users.show` reads it: the summary, its failed log-ins in the current window, and its live
/// sessions (none while locked: its tokens are dead).
struct AdminAccountView {
    let summary: AccountSummary
    let failedLogins: Int
    let sessions: Int
}

// What an administrator does to an account (protocol.md "Administering users"), against the storage. The caller (a method) owns the
// session changes: ending a locked account's sessions, propagating a deletion.
extension AccountProcedures {
    /// The account named by a username or an email, as a log-in names it; `not_found` when none.
    func summary(of typed: String, charge: QueueCharge, completion: @escaping (Result<AccountSummary, RosterError>) -> Void) {
        let identifier = AccountIdentifier(loginIdentifier: Normalization.canonicalLoginIdentifier(typed))
        storage.acting(for: charge).accountSummary(identifier) { result in
            completion(result.mapError(\.rosterError).flatMap { $0.map { .success($0) } ?? .failure(.notFound) })
        }
    }

    /// The rate limit's key of this account, as every log-in of it counts its failures.
    static func failureKey(of account: Account) -> String {
        LoginRateLimit.accountKey(found: account.username, identifier: account.username)
    }

    func listAccounts(matching query: String?, limit: Int, offset: Int, charge: QueueCharge,
                      completion: @escaping (Result<AccountPage, RosterError>) -> Void) {
        storage.acting(for: charge).listAccounts(matching: query, limit: limit, offset: offset) {
            completion($0.mapError(\.rosterError))
        }
    }

    /// `admin.users.show`: the summary, then the window's failures, then (unless locked) the live sessions.
    func adminView(of typed: String, charge: QueueCharge, completion: @escaping (Result<AdminAccountView, RosterError>) -> Void) {
        summary(of: typed, charge: charge) { [self] found in
            guard case .success(let summary) = found else { return completion(.failure(found.failureValue ?? .internal)) }
            let key = Self.failureKey(of: summary.account)
            storage.acting(for: charge).recentFailures(keys: [key], windowMs: LoginGate.windowMs(policy)) { [self] failures in
                guard case .success(let failures) = failures else {
                    return completion(.failure(failures.failureValue?.rosterError ?? .internal))
                }
                let failed = failures.times[key]?.count ?? 0
                guard !summary.account.locked else {
                    return completion(.success(AdminAccountView(summary: summary, failedLogins: failed, sessions: 0)))
                }
                sessions(of: summary.account, charge: charge) { listed in
                    completion(listed.map { AdminAccountView(summary: summary, failedLogins: failed, sessions: $0.count) })
                }
            }
        }
    }

    /// Locks the account for the administrator `peer` (the entry's reason is the lock's); answers it (the caller
    /// ends its sessions).
    func lock(_ typed: String, reason: String?, peer: AuditPeer, charge: QueueCharge,
              completion: @escaping (Result<Account, RosterError>) -> Void) {
        act(on: typed, charge: charge, completion: completion) { [self] account, done in
            let entry = AuditRecord(event: .locked, username: account.username, peer: peer, reason: reason)
            storage.acting(for: charge).lockAccount(account.id, reason: reason, audit: entry) { [logger] result in
                if case .success(true) = result {
                    let fields = [("ROSTER_USER", account.username)]
                    logger.notice("account locked", fields + (reason.map { [("ROSTER_LOCK_REASON", $0)] } ?? []))
                }
                done(result)
            }
        }
    }

    /// Unlocks the account; its old tokens are deleted, so only a new log-in opens a session.
    func unlock(_ typed: String, peer: AuditPeer, charge: QueueCharge,
                completion: @escaping (Result<Account, RosterError>) -> Void) {
        act(on: typed, charge: charge, completion: completion) { [self] account, done in
            let entry = AuditRecord(event: .unlocked, username: account.username, peer: peer)
            storage.acting(for: charge).unlockAccount(account.id, audit: entry) { [logger] result in
                if case .success(true) = result {
                    logger.notice("account unlocked", [("ROSTER_USER", account.username)])
                }
                done(result)
            }
        }
    }

    /// Deletes the failed log-ins counted against the account (not those of the peers that made them).
    func resetFailures(of typed: String, peer: AuditPeer, charge: QueueCharge,
                       completion: @escaping (Result<Account, RosterError>) -> Void) {
        act(on: typed, charge: charge, completion: completion) { [self] account, done in
            let entry = AuditRecord(event: .failuresReset, username: account.username, peer: peer)
            storage.acting(for: charge).resetFailures(keys: [Self.failureKey(of: account)], audit: entry) { [logger] result in
                if case .success = result {
                    logger.notice("failed log-ins reset", [("ROSTER_USER", account.username)])
                }
                done(result.map { true })
            }
        }
    }

    /// `admin.users.delete`: `account.delete`'s storage call, without the password; the entry names the
    /// administrator as its peer.
    func adminDelete(_ typed: String, peer: AuditPeer, charge: QueueCharge,
                     completion: @escaping (Result<DeletedAccount, RosterError>) -> Void) {
        summary(of: typed, charge: charge) { [self] found in
            guard case .success(let summary) = found else { return completion(.failure(found.failureValue ?? .internal)) }
            let account = summary.account
            let entry = AuditRecord(event: .deleted, username: account.username, peer: peer)
            // The account's own language is not kept; the administrator's session's is no better a guess.
            let mail = notice(.accountDeleted, about: account, locale: .default)
            storage.acting(for: charge).deleteAccount(account.id, failureKeys: [Self.failureKey(of: account)], audit: entry,
                                                      mail: mail) { [self] result in
                committed(mail, result)
                if case .success(.some) = result {
                    logger.notice("account deleted by an administrator", [("ROSTER_USER", account.username)])
                }
                completion(result.mapError(\.rosterError).flatMap { $0.map { .success($0) } ?? .failure(.notFound) })
            }
        }
    }

    /// Finds the account, then runs `body` on it; a `false` from the storage means it went meanwhile: `not_found`.
    private func act(on typed: String, charge: QueueCharge, completion: @escaping (Result<Account, RosterError>) -> Void,
                     _ body: @escaping (Account, @escaping (Result<Bool, StorageFailure>) -> Void) -> Void) {
        summary(of: typed, charge: charge) { found in
            guard case .success(let summary) = found else { return completion(.failure(found.failureValue ?? .internal)) }
            body(summary.account) { result in
                completion(result.mapError(\.rosterError).flatMap { $0 ? .success(summary.account) : .failure(.notFound) })
            }
        }
    }
}

extension Result {
    /// The error, when this is one.
    var failureValue: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
