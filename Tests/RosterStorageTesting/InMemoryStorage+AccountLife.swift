import RosterCore
import RosterRuntime
import RosterStorage

// The account-life calls (protocol.md §The life of an account) on the in-memory rows, with the SQLite backend's behaviour: each call is
// one transaction (it runs whole when answered), and a gone account answers nil or false, never a failure.
extension InMemoryStorage {
    public func security(of account: AccountID, charge: QueueCharge, completion: @escaping StorageCompletion<AccountSecurity?>) {
        answer(.security, completion) {
            .success(self.accounts[account].map {
                AccountSecurity(totp: $0.totp, pendingTOTP: $0.pendingTOTP, recoveryCodesLeft: $0.recoveryCodes.count)
            })
        }
    }

    public func credential(of account: AccountID, charge: QueueCharge, completion: @escaping StorageCompletion<Credential?>) {
        answer(.credentialOf, completion) {
            .success(self.accounts[account].map {
                Credential(account: $0.account, passwordHash: $0.passwordHash, totp: $0.totp)
            })
        }
    }

    public func changePassword(of account: AccountID, to passwordHash: String, keeping: [UInt8]?, audit: AuditRecord?,
                               mail: [QueuedMail], charge: QueueCharge, completion: @escaping StorageCompletion<[[UInt8]]>) {
        answer(.changePassword, completion) {
            // What the SQLite schema's CHECK refuses, refused alike.
            guard StoredPasswordHash.isStorable(passwordHash) else { return .failure(.other) }
            guard self.accounts[account] != nil else { return .success([]) }
            self.accounts[account]?.passwordHash = passwordHash
            self.audited(audit, queuing: mail, for: account)
            return .success(self.removeTokens(of: account, except: keeping))
        }
    }

    public func changeEmail(of account: AccountID, to email: String?, audit: AuditRecord?, mail: [QueuedMail],
                            charge: QueueCharge, completion: @escaping StorageCompletion<Account?>) {
        answer(.changeEmail, completion) {
            guard email != "" else { return .failure(.other) }
            guard let stored = self.accounts[account] else { return .success(nil) }
            if let email, let holder = self.accountByEmail[Self.noCase(email)], holder != account {
                return .failure(.conflict(.email))
            }
            if let old = stored.account.email { self.accountByEmail[Self.noCase(old)] = nil }
            if let email { self.accountByEmail[Self.noCase(email)] = account }
            if stored.account.email.map(Self.noCase) != email.map(Self.noCase) {
                self.accounts[account]?.account.emailVerified = false
            }
            self.accounts[account]?.account.email = email
            self.audited(audit, queuing: mail, for: account)
            return .success(self.accounts[account]?.account)
        }
    }

    public func deleteAccount(_ account: AccountID, failureKeys: [String], audit: AuditRecord?, mail: [QueuedMail],
                              charge: QueueCharge, completion: @escaping StorageCompletion<DeletedAccount?>) {
        answer(.deleteAccount, completion) {
            guard let stored = self.accounts.removeValue(forKey: account) else { return .success(nil) }
            self.accountByUsername[Self.noCase(stored.account.username)] = nil
            if let email = stored.account.email { self.accountByEmail[Self.noCase(email)] = nil }
            let revoked = self.removeTokens(of: account, except: nil)
            self.contacts = self.contacts.filter { $0.value.owner != account }
            self.books[account] = nil
            self.tombstones[account] = nil
            for key in failureKeys { self.failureTimes[key] = nil }
            self.mailCodes[account] = nil
            self.removePasskeys(of: account)
            self.outbox = self.outbox.filter { _, row in
                !(row.account == account && row.status == .queued && MailKindName.carryingCode.contains(row.kind))
            }
            self.audited(audit, queuing: mail, for: account)
            return .success(DeletedAccount(account: stored.account, revokedTokens: revoked))
        }
    }

    public func sessions(of account: AccountID, idleLimitMs: Int64, charge: QueueCharge,
                  completion: @escaping StorageCompletion<[StoredSession]>) {
        answer(.sessions, completion) {
            let now = self.clock.nowMs()
            let live = self.tokens.filter {
                $0.value.account == account && Self.elapsed(since: $0.value.lastUsedMs, now: now) < idleLimitMs
            }
            return .success(live.map {
                StoredSession(tokenHash: $0.key, createdAtMs: $0.value.createdMs, lastUsedAtMs: $0.value.lastUsedMs,
                              client: $0.value.client)
            }.sorted {
                $0.createdAtMs != $1.createdAtMs ? $0.createdAtMs < $1.createdAtMs
                    : $0.tokenHash.lexicographicallyPrecedes($1.tokenHash)
            })
        }
    }

    public func revokeTokens(of account: AccountID, except keeping: [UInt8]?, audit: AuditRecord?, charge: QueueCharge,
                      completion: @escaping StorageCompletion<[[UInt8]]>) {
        answer(.revokeTokens, completion) {
            guard self.accounts[account] != nil else { return .success([]) }
            self.audited(audit)
            return .success(self.removeTokens(of: account, except: keeping))
        }
    }

    public func replaceRecoveryCodes(of account: AccountID, hashes: [[UInt8]], audit: AuditRecord?, mail: [QueuedMail],
                                     charge: QueueCharge, completion: @escaping StorageCompletion<Void>) {
        answer(.replaceRecoveryCodes, completion) {
            guard self.accounts[account] != nil else { return .success(()) }
            self.accounts[account]?.recoveryCodes = Set(hashes)
            self.audited(audit, queuing: mail, for: account)
            return .success(())
        }
    }

    public func holdsRecoveryCode(of account: AccountID, codeHash: [UInt8], charge: QueueCharge,
                           completion: @escaping StorageCompletion<Bool>) {
        answer(.holdsRecoveryCode, completion) { .success(self.accounts[account]?.recoveryCodes.contains(codeHash) ?? false) }
    }

    public func redeemRecoveryCode(of account: AccountID, codeHash: [UInt8], newPasswordHash: String, audit: AuditRecord?,
                                   mail: [QueuedMail], charge: QueueCharge,
                                   completion: @escaping StorageCompletion<[[UInt8]]?>) {
        answer(.redeemRecoveryCode, completion) {
            guard StoredPasswordHash.isStorable(newPasswordHash) else { return .failure(.other) }
            guard self.accounts[account]?.recoveryCodes.remove(codeHash) != nil else { return .success(nil) }
            self.accounts[account]?.passwordHash = newPasswordHash
            self.audited(audit, queuing: mail, for: account)
            return .success(self.removeTokens(of: account, except: nil))
        }
    }

    public func storePendingTOTP(of account: AccountID, sealed: [UInt8], charge: QueueCharge,
                          completion: @escaping StorageCompletion<Void>) {
        answer(.storePendingTOTP, completion) {
            self.accounts[account]?.pendingTOTP = sealed
            return .success(())
        }
    }

    public func confirmTOTP(of account: AccountID, step: Int64, audit: AuditRecord?, charge: QueueCharge, completion: @escaping StorageCompletion<Bool>) {
        answer(.confirmTOTP, completion) {
            guard let pending = self.accounts[account]?.pendingTOTP else { return .success(false) }
            self.accounts[account]?.totp = TOTPSeal(sealed: pending, lastStep: step)
            self.accounts[account]?.pendingTOTP = nil
            self.audited(audit)
            return .success(true)
        }
    }

    public func acceptTOTPStep(of account: AccountID, step: Int64, charge: QueueCharge,
                        completion: @escaping StorageCompletion<Bool>) {
        answer(.acceptTOTPStep, completion) {
            guard let totp = self.accounts[account]?.totp else { return .success(false) }
            if let last = totp.lastStep, last >= step { return .success(false) }
            self.accounts[account]?.totp?.lastStep = step
            return .success(true)
        }
    }

    public func removeTOTP(of account: AccountID, audit: AuditRecord?, mail: [QueuedMail], charge: QueueCharge,
                           completion: @escaping StorageCompletion<Void>) {
        answer(.removeTOTP, completion) {
            guard self.accounts[account] != nil else { return .success(()) }
            self.accounts[account]?.totp = nil
            self.accounts[account]?.pendingTOTP = nil
            self.audited(audit, queuing: mail, for: account)
            return .success(())
        }
    }

    /// Removes the account's tokens but `keeping`; answers the removed hashes.
    func removeTokens(of account: AccountID, except keeping: [UInt8]?) -> [[UInt8]] {
        let revoked = tokens.filter { $0.value.account == account && $0.key != keeping }.map(\.key)
        for hash in revoked { tokens[hash] = nil }
        return revoked.sorted { $0.lexicographicallyPrecedes($1) }
    }
}
