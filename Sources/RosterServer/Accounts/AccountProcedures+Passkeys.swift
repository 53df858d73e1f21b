import RosterCore
import RosterCrypto
import RosterRuntime
import RosterStorage
import RosterWebAuthn

// Passkeys (protocol.md "Passkeys"), carried out against the storage and the WebAuthn verifier. Registration
// and removal prove the password first (`Reauthentication`, the log-in gate); a passkey log-in runs
// `PasskeyLogIn` under the same gate. The ceremonies' challenges are the connection's (`PasskeyCeremonies`),
// the caller's to take and hand in here.

/// What `passkey.register_begin` needs from the storage: the account's user handle and the passkeys to exclude.
struct PasskeyRegistrationStart {
    let userHandle: [UInt8]
    let existing: [StoredPasskey]
}

/// What a passkey log-in needs besides the procedure: the response, the challenge it must answer, and where from.
struct PasskeyAssertionInput {
    let response: AssertionResponse?
    let challenge: [UInt8]
    let relyingParty: RelyingParty
}

extension RelyingParty {
    /// The relying party `[WebAuthn]` describes.
    init(_ settings: WebAuthnSettings) {
        self.init(id: settings.rpID, name: settings.rpName, origins: settings.origins)
    }
}

extension AccountProcedures {
    /// `passkey.register_begin`: the password again, then the account's handle (made on its first passkey) and
    /// its passkeys.
    func beginPasskeyRegistration(of account: Account, password: Secret, peer: AuditPeer, charge: QueueCharge,
                                  completion: @escaping (Result<PasskeyRegistrationStart, RosterError>) -> Void) {
        provePassword(account, password, for: .passkeyAdded, peer: peer, charge: charge, then: { [self] in
            let candidate: [UInt8]
            do { candidate = try RandomBytes.make(count: PasskeyLimits.userHandleBytes) } catch {
                return completion(.failure(.internal))
            }
            let data = storage.acting(for: charge)
            data.passkeyUserHandle(of: account.id, candidate: candidate) { handled in
                switch handled {
                case .failure(let failure): completion(.failure(failure.rosterError))
                case .success(nil): completion(.failure(.unauthenticated))
                case .success(let handle?):
                    data.passkeys(of: account.id) { listed in
                        completion(listed.map { PasskeyRegistrationStart(userHandle: handle, existing: $0) }
                            .mapError(\.rosterError))
                    }
                }
            }
        }, failure: { completion(.failure($0)) })
    }

    /// `passkey.register_finish` after its challenge was taken: verifies the response and stores the passkey with
    /// its `passkey_added` entry. A refusal is audited as `passkey_rejected` with its why, so an administrator
    /// sees what an authenticator sent.
    func finishPasskeyRegistration(of account: Account, response: RegistrationResponse, challenge: [UInt8],
                                   relyingParty: RelyingParty, name: String?, peer: AuditPeer, charge: QueueCharge,
                                   completion: @escaping (Result<StoredPasskey, RosterError>) -> Void) {
        let verified: VerifiedRegistration
        do throws(PasskeyRejection) {
            verified = try RegistrationVerifier.verify(response, challenge: challenge, relyingParty: relyingParty)
        } catch {
            return rejectRegistration(error, of: account, peer: peer, charge: charge, completion: completion)
        }
        let data = storage.acting(for: charge)
        data.passkeys(of: account.id) { [self] listed in
            let existing: [StoredPasskey]
            switch listed {
            case .success(let passkeys): existing = passkeys
            case .failure(let failure): return completion(.failure(failure.rosterError))
            }
            let passkey = StoredPasskey(
                credentialID: verified.credentialID, account: account.id, algorithm: verified.publicKey.algorithm.rawValue,
                publicKey: verified.publicKey.raw, signCount: verified.signCount, transports: response.transports,
                name: name ?? Self.defaultPasskeyName(after: existing))
            let entry = AuditRecord(event: .passkeyAdded, username: account.username, peer: peer)
            data.addPasskey(passkey, limit: PasskeyLimits.perAccount, audit: entry) { [self] added in
                switch added {
                case .failure(let failure): completion(.failure(failure.rosterError))
                case .success(.added(let stored)):
                    logger.info("passkey added", [("ROSTER_USER", account.username)])
                    completion(.success(stored))
                case .success(.duplicate):
                    rejectRegistration(.duplicate, of: account, peer: peer, charge: charge, completion: completion)
                case .success(.full):
                    completion(.failure(.invalidParams(param: "credential", problem: .tooManyPasskeys)))
                case .success(.gone):
                    completion(.failure(.unauthenticated))
                }
            }
        }
    }

    private func rejectRegistration(_ why: PasskeyRejection, of account: Account, peer: AuditPeer, charge: QueueCharge,
                                    completion: @escaping (Result<StoredPasskey, RosterError>) -> Void) {
        let entry = AuditRecord(event: .passkeyRejected, username: account.username, peer: peer, outcome: .failed,
                                reason: why.rawValue)
        append(entry, charge: charge) { completion(.failure(.passkeyRejected(why: why.rawValue))) }
    }

    /// "Passkey N", N one past the highest such name the account holds, so a removal never makes two alike.
    static func defaultPasskeyName(after existing: [StoredPasskey]) -> String {
        let numbers = existing.compactMap { passkey -> Int? in
            guard passkey.name.hasPrefix("Passkey ") else { return nil }
            return Int(passkey.name.dropFirst(8))
        }
        return "Passkey \((numbers.max() ?? 0) + 1)"
    }

    /// `passkey.remove`: the password again, then the passkey and its `passkey_removed` entry; `not_found` when
    /// the account holds no passkey with that id.
    func removePasskey(of account: Account, credentialID: [UInt8], password: Secret, peer: AuditPeer,
                       charge: QueueCharge, completion: @escaping (Result<Void, RosterError>) -> Void) {
        provePassword(account, password, for: .passkeyRemoved, peer: peer, charge: charge, then: { [self] in
            let entry = AuditRecord(event: .passkeyRemoved, username: account.username, peer: peer)
            storage.acting(for: charge).removePasskey(of: account.id, credentialID: credentialID, audit: entry,
                                                      mail: []) { [logger] removed in
                switch removed {
                case .failure(let failure): completion(.failure(failure.rosterError))
                case .success(false): completion(.failure(.notFound))
                case .success(true):
                    logger.info("passkey removed", [("ROSTER_USER", account.username)])
                    completion(.success(()))
                }
            }
        }, failure: { completion(.failure($0)) })
    }

    /// The account's passkeys, oldest first (`passkey.list`, `account.export`).
    func passkeys(of account: Account, charge: QueueCharge,
                  completion: @escaping (Result<[StoredPasskey], RosterError>) -> Void) {
        storage.acting(for: charge).passkeys(of: account.id) { completion($0.mapError(\.rosterError)) }
    }

    /// The credentials `auth.passkey_begin` allows for `username`: its passkeys, or none for an unknown name (the
    /// answer then looks like a discoverable one's, telling nobody whether the name exists).
    func passkeysAllowed(for username: String, charge: QueueCharge,
                         completion: @escaping (Result<[AllowedPasskey], RosterError>) -> Void) {
        let data = storage.acting(for: charge)
        let name = Normalization.canonicalLoginIdentifier(username)
        // Without RevealUnknownUsers a name with no passkey (unknown, or an account that has none) is offered
        // a decoy, so the list does not say which names hold an account.
        let decoy = policy.revealUnknownUsers ? []
            : [AllowedPasskey(credentialID: PasskeyDecoy.credentialID(for: name, key: secrets.passkeyDecoys),
                              transports: AllowedPasskey.decoyTransports)]
        data.credential(for: AccountIdentifier(loginIdentifier: name)) { found in
            switch found {
            case .failure(let failure): completion(.failure(failure.rosterError))
            case .success(nil): completion(.success(decoy))
            case .success(let credential?):
                data.passkeys(of: credential.account.id) { result in
                    completion(result.mapError(\.rosterError).map { stored in
                        stored.isEmpty ? decoy : stored.map(AllowedPasskey.init)
                    })
                }
            }
        }
    }

    /// One passkey log-in (`PasskeyLogIn`) of `peer`: a `login` entry with `method: passkey` when it works, or
    /// the refusal's entry (its why as the reason) recorded with the failure.
    func logIn(passkey request: PasskeyLogInRequest, input: PasskeyAssertionInput, peer: AuditPeer, charge: QueueCharge,
               completion: @escaping (Result<PasskeyLogIn<Account, PasskeyPublicKey>.SignedIn, RosterError>) -> Void) {
        typealias Attempt = PasskeyLogIn<Account, PasskeyPublicKey>
        let data = storage.acting(for: charge)
        var attempt = Attempt(request, requester: peer.requester, policy: policy)
        var username: String?
        let driver = MachineDriver<Attempt.Fact, Attempt.Effect> { [self] fact in attempt.step(fact, gate: &gate) }
        driver.perform = { [self] effect, driver in
            switch effect {
            case .findPasskey(let credentialID, let userHandle):
                findPasskeyOwner(credentialID, userHandle: userHandle, data: data) { result in
                    if case .success(let found?) = result { username = found.username }
                    driver.feed(result.map { .passkeyFound($0) }.orFailed())
                }
            case .readFailures(let keys, let windowMs):
                data.recentFailures(keys: keys, windowMs: windowMs) { result in
                    driver.feed(result.map { .failuresRead(times: $0.times, nowMs: $0.nowMs) }.orFailed())
                }
            case .verifyAssertion(let key):
                guard let response = input.response else { return driver.feed(.failed(.internal)) }
                do throws(PasskeyRejection) {
                    let verified = try AssertionVerifier.verify(response, challenge: input.challenge,
                                                                relyingParty: input.relyingParty, key: key)
                    driver.feed(.assertionVerified(.accepted(signCount: verified.signCount,
                                                             userVerified: verified.userVerified)))
                } catch {
                    driver.feed(.assertionVerified(.rejected(why: error.rawValue)))
                }
            case .useSignCount(let credentialID, let signCount):
                data.usePasskey(credentialID: credentialID, signCount: signCount, usedMs: clock.nowMs()) { result in
                    driver.feed(result.map { use -> Attempt.Fact in
                        if case .used = use { return .signCountUsed(true) }
                        return .signCountUsed(false)
                    }.orFailed())
                }
            case .verifyCode(let code, let totp, let account):
                verifyCode(code, totp: totp, of: account, charge: charge) { fact in
                    switch fact {
                    case .codeVerified(let right): driver.feed(.codeVerified(right))
                    case .failed(let error): driver.feed(.failed(error))
                    default: driver.feed(.failed(.internal))
                    }
                }
            case .recordFailure(let keys, let refusal, let named):
                let entry = failedEntry(.login, username: named, reason: Self.passkeyEntryReason(refusal), peer: peer,
                                        method: .passkey)
                data.recordFailure(keys: keys, audit: entry) { driver.feed($0.map { .failureRecorded }.orFailed()) }
            case .issueToken(let account):
                let entry = AuditRecord(event: .login, username: account.username, peer: peer, method: .passkey)
                issueToken(for: account, peer: peer, entry: entry, charge: charge) {
                    driver.feed($0.map { .tokenIssued($0) }.orFailed())
                }
            case .finish(let result):
                guard case .failure(let error) = result, let reason = Self.unwrittenRefusal(error) else {
                    return completion(result)
                }
                appendFailedEntry(.login, username: username, reason: reason, peer: peer, method: .passkey,
                                  charge: charge) {
                    completion(result)
                }
            }
        }
        driver.perform(attempt.start())
    }

    /// The passkey and its owner as `PasskeyLogIn` needs them: the key, the owner's TOTP and lock, and whether the
    /// assertion's user handle (when it carried one) is the owner's.
    private func findPasskeyOwner(_ credentialID: [UInt8], userHandle: [UInt8]?, data: any Backend,
                                  completion: @escaping (Result<PasskeyLogIn<Account, PasskeyPublicKey>.Found?, StorageFailure>) -> Void) {
        data.passkey(credentialID: credentialID) { found in
            guard case .success(let owned?) = found else { return completion(found.map { _ in nil }) }
            guard let algorithm = PasskeyPublicKey.Algorithm(rawValue: owned.passkey.algorithm) else {
                return completion(.success(nil))
            }
            let key = PasskeyPublicKey(algorithm: algorithm, raw: owned.passkey.publicKey)
            data.credential(of: owned.account.id) { read in
                guard case .success(let credential?) = read else { return completion(read.map { _ in nil }) }
                let make = { (matches: Bool) in
                    PasskeyLogIn<Account, PasskeyPublicKey>.Found(
                        account: credential.account, username: credential.account.username, key: key,
                        handleMatches: matches, totp: credential.totp, locked: credential.account.locked)
                }
                guard let userHandle else { return completion(.success(make(true))) }
                data.account(forUserHandle: userHandle) { named in
                    completion(named.map { make($0?.id == owned.account.id) })
                }
            }
        }
    }

    /// A refused passkey log-in's entry reason: the why, an unknown passkey, or a wrong code.
    static func passkeyEntryReason(_ refusal: RosterError) -> FailedEntryReason {
        switch refusal {
        case .passkeyRejected(let why): FailedEntryReason(rawValue: why) ?? .passkeySignature
        case .invalidCode: .invalidCode
        default: .unknownPasskey
        }
    }
}
