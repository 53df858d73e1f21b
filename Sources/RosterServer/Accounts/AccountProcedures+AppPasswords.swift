import RosterCore
import RosterCrypto
import RosterRuntime
import RosterStorage

// App passwords (protocol.md "App passwords") and the DAV log-in they open, carried out against the storage. A
// secret is made here (`AppPasswords`, libsodium) and handed back once; only its keyed hash is stored. A DAV log-in
// runs `DavLogIn` under the log-in gate every attempt on this daemon shares.

extension AccountProcedures {
    /// `account.app_password_create`: a fresh secret stored as its hash, with its `app_password_added` entry; the
    /// stored row and the secret (shown once). `too_many_app_passwords` at the cap.
    func createAppPassword(of account: Account, name: String, peer: AuditPeer, charge: QueueCharge,
                           completion: @escaping (Result<(StoredAppPassword, Secret), RosterError>) -> Void) {
        let issued: AppPasswords.Issued
        do { issued = try AppPasswords.generate(key: secrets.appPasswords) } catch {
            logger.error("app password generation failed: \(error)")
            return completion(.failure(.internal))
        }
        let row = StoredAppPassword(id: issued.id, account: account.id, name: name, hash: issued.hash)
        let entry = AuditRecord(event: .appPasswordAdded, username: account.username, peer: peer)
        storage.acting(for: charge).addAppPassword(row, limit: AppPasswordLimits.perAccount, audit: entry) {
            [logger] added in
            switch added {
            case .failure(let failure): completion(.failure(failure.rosterError))
            case .success(.added(let stored)):
                logger.info("app password added", [("ROSTER_USER", account.username)])
                completion(.success((stored, Secret(issued.secret))))
            case .success(.full):
                completion(.failure(.invalidParams(param: "name", problem: .tooManyAppPasswords)))
            case .success(.gone):
                completion(.failure(.unauthenticated))
            }
        }
    }

    /// The account's app passwords, oldest first (`account.app_password_list`, `account.export`).
    func appPasswords(of account: Account, charge: QueueCharge,
                      completion: @escaping (Result<[StoredAppPassword], RosterError>) -> Void) {
        storage.acting(for: charge).appPasswords(of: account.id) { completion($0.mapError(\.rosterError)) }
    }

    /// `account.app_password_remove`: the app password and its `app_password_removed` entry; `not_found` when the
    /// account holds none with that id. The tokens it logged in keep going until they idle out or are revoked
    /// (`session.revoke`), as a password change's do not: the owner sees them in `session.list`.
    func removeAppPassword(of account: Account, id: String, peer: AuditPeer, charge: QueueCharge,
                           completion: @escaping (Result<Void, RosterError>) -> Void) {
        let entry = AuditRecord(event: .appPasswordRemoved, username: account.username, peer: peer)
        storage.acting(for: charge).removeAppPassword(of: account.id, id: id, audit: entry) { [logger] removed in
            switch removed {
            case .failure(let failure): completion(.failure(failure.rosterError))
            case .success(false): completion(.failure(.notFound))
            case .success(true):
                logger.info("app password removed", [("ROSTER_USER", account.username)])
                completion(.success(()))
            }
        }
    }

    /// One DAV log-in (`DavLogIn`) of `peer`: a `login` entry with `method: app_password` (or `password`) and a
    /// contacts-only token when it works, or the refusal's entry recorded with the failure.
    func davLogIn(_ request: DavLogInRequest, peer: AuditPeer, charge: QueueCharge,
                  completion: @escaping (Result<DavLogIn<Account>.SignedIn, RosterError>) -> Void) {
        typealias Attempt = DavLogIn<Account>
        let data = storage.acting(for: charge)
        var attempt = Attempt(request, requester: peer.requester, policy: policy)
        var username: String?
        // How the entry of a refusal says it was tried: a secret in an app password's shape, or a password.
        let typedMethod: LoginMethod = AppPasswords.normalize(request.password.exposed) != nil ? .appPassword : .password
        let driver = MachineDriver<Attempt.Fact, Attempt.Effect> { [self] fact in attempt.step(fact, gate: &gate) }
        driver.perform = { [self] effect, driver in
            switch effect {
            case .findAccount(let identifier):
                data.credential(for: AccountIdentifier(loginIdentifier: identifier)) { result in
                    if case .success(let found) = result { username = found?.account.username }
                    driver.feed(result.map { found in
                        .accountFound(found.map {
                            Attempt.Found(account: $0.account, username: $0.account.username,
                                          passwordHash: $0.passwordHash, hasTOTP: $0.totp != nil,
                                          locked: $0.account.locked)
                        })
                    }.orFailed())
                }
            case .readFailures(let keys, let windowMs):
                data.recentFailures(keys: keys, windowMs: windowMs) { result in
                    driver.feed(result.map { .failuresRead(times: $0.times, nowMs: $0.nowMs) }.orFailed())
                }
            case .checkAppPassword(let password, let account):
                guard let typed = AppPasswords.hash(password.exposed, key: secrets.appPasswords) else {
                    return driver.feed(.appPasswordChecked(id: nil))
                }
                data.appPasswords(of: account.id) { [self] listed in
                    let rows: [StoredAppPassword]
                    switch listed {
                    case .success(let stored): rows = stored
                    case .failure(let failure): return driver.feed(.failed(failure.rosterError))
                    }
                    // Every row is compared, matched or not, so the time tells nothing of which one matched.
                    var matched: StoredAppPassword?
                    for row in rows where AppPasswords.same(row.hash, typed) && matched == nil { matched = row }
                    if let matched, matched.wantsTouch(at: clock.nowMs()) {
                        data.touchAppPassword(of: account.id, id: matched.id, usedMs: clock.nowMs()) { _ in }
                    }
                    driver.feed(.appPasswordChecked(id: matched?.id))
                }
            case .verify(let password, let hash):
                passwords.verify(password, against: hash, charge: charge) { result in
                    driver.feed(result.map { verification -> Attempt.Fact in
                        if case .accepted = verification { return .verified(true) }
                        return .verified(false)
                    }.orFailed())
                }
            case .recordFailure(let keys, let refusal, let named):
                let reason: FailedEntryReason = switch refusal {
                case .unknownUser: .unknownUser
                case .wrongPassword: .wrongPassword
                case .appPasswordRequired: .appPasswordRequired
                }
                let entry = failedEntry(.login, username: named, reason: reason, peer: peer, method: typedMethod)
                data.recordFailure(keys: keys, audit: entry) { driver.feed($0.map { .failureRecorded }.orFailed()) }
            case .issueToken(let account, let proof):
                let method: LoginMethod = if case .appPassword = proof { .appPassword } else { .password }
                let entry = AuditRecord(event: .login, username: account.username, peer: peer, method: method)
                issueToken(for: account, peer: peer, entry: entry, contactsOnly: true, charge: charge) {
                    driver.feed($0.map { .tokenIssued($0) }.orFailed())
                }
            case .finish(let result):
                guard case .failure(let error) = result, let reason = Self.unwrittenRefusal(error) else {
                    return completion(result)
                }
                appendFailedEntry(.login, username: username, reason: reason, peer: peer, method: typedMethod,
                                  charge: charge) {
                    completion(result)
                }
            }
        }
        driver.perform(attempt.start())
    }
}

extension DavLogIn.Fact: FailableFact {}
