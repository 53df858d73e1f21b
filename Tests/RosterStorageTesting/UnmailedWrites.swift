import RosterStorage

// The writes that may queue mail, as tests that are not about mail call them: with none. The daemon's own paths
// say what they queue (or `[]`, on purpose) at every call, so these live only here.

extension AccountStorage {
    public func createAccount(_ account: NewAccount, audit: AuditRecord?, completion: @escaping StorageCompletion<Account>) {
        createAccount(account, audit: audit, mail: [], completion: completion)
    }
}

extension AccountLifeStorage {
    public func changePassword(of account: AccountID, to passwordHash: String, keeping: [UInt8]?, audit: AuditRecord?,
                               completion: @escaping StorageCompletion<[[UInt8]]>) {
        changePassword(of: account, to: passwordHash, keeping: keeping, audit: audit, mail: [], completion: completion)
    }

    public func changeEmail(of account: AccountID, to email: String?, audit: AuditRecord?,
                            completion: @escaping StorageCompletion<Account?>) {
        changeEmail(of: account, to: email, audit: audit, mail: [], completion: completion)
    }

    public func deleteAccount(_ account: AccountID, failureKeys: [String], audit: AuditRecord?,
                              completion: @escaping StorageCompletion<DeletedAccount?>) {
        deleteAccount(account, failureKeys: failureKeys, audit: audit, mail: [], completion: completion)
    }

    public func replaceRecoveryCodes(of account: AccountID, hashes: [[UInt8]], audit: AuditRecord?,
                                     completion: @escaping StorageCompletion<Void>) {
        replaceRecoveryCodes(of: account, hashes: hashes, audit: audit, mail: [], completion: completion)
    }

    public func redeemRecoveryCode(of account: AccountID, codeHash: [UInt8], newPasswordHash: String,
                                   audit: AuditRecord?, completion: @escaping StorageCompletion<[[UInt8]]?>) {
        redeemRecoveryCode(of: account, codeHash: codeHash, newPasswordHash: newPasswordHash, audit: audit, mail: [],
                           completion: completion)
    }

    public func removeTOTP(of account: AccountID, audit: AuditRecord?, completion: @escaping StorageCompletion<Void>) {
        removeTOTP(of: account, audit: audit, mail: [], completion: completion)
    }
}
