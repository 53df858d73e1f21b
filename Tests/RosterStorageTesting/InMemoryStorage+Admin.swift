import RosterCore
import RosterRuntime
import RosterStorage

// The administrator's calls (protocol.md §Administering users) on the in-memory rows, as the SQLite backend does them.
extension InMemoryStorage {
    public func listAccounts(matching query: String?, limit: Int, offset: Int, charge: QueueCharge,
                      completion: @escaping StorageCompletion<AccountPage>) {
        answer(.listAccounts, completion) {
            let needle = Self.noCase(query ?? "")
            let matching = self.accounts.values.filter { stored in
                needle.isEmpty || Self.noCase(stored.account.username).contains(needle)
                    || (stored.account.email.map { Self.noCase($0).contains(needle) } ?? false)
            }.sorted { Self.noCase($0.account.username) < Self.noCase($1.account.username) }
            let page = matching.dropFirst(max(0, offset)).prefix(max(0, limit))
            return .success(AccountPage(items: page.map(Self.summary), total: matching.count))
        }
    }

    public func accountSummary(_ identifier: AccountIdentifier, charge: QueueCharge,
                        completion: @escaping StorageCompletion<AccountSummary?>) {
        answer(.accountSummary, completion) {
            let id: AccountID? = switch identifier {
            case .username(let name): self.accountByUsername[Self.noCase(name)]
            case .email(let email): self.accountByEmail[Self.noCase(email)]
            }
            return .success(id.flatMap { self.accounts[$0] }.map(Self.summary))
        }
    }

    public func lockAccount(_ account: AccountID, reason: String?, audit: AuditRecord?, charge: QueueCharge,
                     completion: @escaping StorageCompletion<Bool>) {
        answer(.lockAccount, completion) {
            guard self.accounts[account] != nil else { return .success(false) }
            let now = self.clock.nowMs()
            if self.accounts[account]?.lockedMs == nil { self.accounts[account]?.lockedMs = now }
            self.accounts[account]?.lockedReason = reason
            self.accounts[account]?.account.locked = true
            self.audited(audit)
            return .success(true)
        }
    }

    public func unlockAccount(_ account: AccountID, audit: AuditRecord?, charge: QueueCharge, completion: @escaping StorageCompletion<Bool>) {
        answer(.unlockAccount, completion) {
            guard self.accounts[account] != nil else { return .success(false) }
            self.accounts[account]?.lockedMs = nil
            self.accounts[account]?.lockedReason = nil
            self.accounts[account]?.account.locked = false
            _ = self.removeTokens(of: account, except: nil)
            self.audited(audit)
            return .success(true)
        }
    }

    public func resetFailures(keys: [String], audit: AuditRecord?, charge: QueueCharge, completion: @escaping StorageCompletion<Void>) {
        answer(.resetFailures, completion) {
            for key in keys { self.failureTimes[key] = nil }
            self.audited(audit)
            return .success(())
        }
    }

    private static func summary(_ stored: StoredAccount) -> AccountSummary {
        AccountSummary(account: stored.account, lastLoginAtMs: stored.lastLoginMs, lockedAtMs: stored.lockedMs,
                       lockedReason: stored.lockedReason, totp: stored.totp != nil)
    }
}
