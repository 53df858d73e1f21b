import RosterRuntime
import RosterStorage

// The writes as tests that are not about the audit log call them: with no entry. The daemon's own paths name
// their entry (or nil, on purpose) at every call, so these live only here.

extension AccountStorage {
    public func createAccount(_ account: NewAccount, completion: @escaping StorageCompletion<Account>) {
        createAccount(account, audit: nil, mail: [], completion: completion)
    }
}

extension SessionTokenStorage {
    public func storeToken(hash: [UInt8], for account: AccountID, client: String? = nil,
                           completion: @escaping StorageCompletion<Void>) {
        storeToken(hash: hash, for: account, client: client, audit: nil, completion: completion)
    }

    public func resumeToken(hash: [UInt8], idleLimitMs: Int64, completion: @escaping StorageCompletion<Account?>) {
        resumeToken(hash: hash, idleLimitMs: idleLimitMs, audit: nil, completion: completion)
    }

    public func revokeToken(hash: [UInt8], completion: @escaping StorageCompletion<Bool>) {
        revokeToken(hash: hash, audit: nil, completion: completion)
    }
}

extension LoginFailureStorage {
    public func recordFailure(keys: [String], completion: @escaping StorageCompletion<Void>) {
        recordFailure(keys: keys, audit: nil, completion: completion)
    }
}

extension AdminStorage {
    public func lockAccount(_ account: AccountID, reason: String?, completion: @escaping StorageCompletion<Bool>) {
        lockAccount(account, reason: reason, audit: nil, completion: completion)
    }

    public func unlockAccount(_ account: AccountID, completion: @escaping StorageCompletion<Bool>) {
        unlockAccount(account, audit: nil, completion: completion)
    }

    public func resetFailures(keys: [String], completion: @escaping StorageCompletion<Void>) {
        resetFailures(keys: keys, audit: nil, completion: completion)
    }
}

extension AccountLifeStorage {
    public func changePassword(of account: AccountID, to passwordHash: String, keeping: [UInt8]?,
                               completion: @escaping StorageCompletion<[[UInt8]]>) {
        changePassword(of: account, to: passwordHash, keeping: keeping, audit: nil, mail: [], completion: completion)
    }

    public func changeEmail(of account: AccountID, to email: String?,
                            completion: @escaping StorageCompletion<Account?>) {
        changeEmail(of: account, to: email, audit: nil, mail: [], completion: completion)
    }

    public func deleteAccount(_ account: AccountID, failureKeys: [String],
                              completion: @escaping StorageCompletion<DeletedAccount?>) {
        deleteAccount(account, failureKeys: failureKeys, audit: nil, mail: [], completion: completion)
    }

    public func revokeTokens(of account: AccountID, except keeping: [UInt8]?,
                             completion: @escaping StorageCompletion<[[UInt8]]>) {
        revokeTokens(of: account, except: keeping, audit: nil, completion: completion)
    }

    public func replaceRecoveryCodes(of account: AccountID, hashes: [[UInt8]],
                                     completion: @escaping StorageCompletion<Void>) {
        replaceRecoveryCodes(of: account, hashes: hashes, audit: nil, mail: [], completion: completion)
    }

    public func redeemRecoveryCode(of account: AccountID, codeHash: [UInt8], newPasswordHash: String,
                                   completion: @escaping StorageCompletion<[[UInt8]]?>) {
        redeemRecoveryCode(of: account, codeHash: codeHash, newPasswordHash: newPasswordHash, audit: nil,
                           mail: [], completion: completion)
    }

    public func confirmTOTP(of account: AccountID, step: Int64, completion: @escaping StorageCompletion<Bool>) {
        confirmTOTP(of: account, step: step, audit: nil, completion: completion)
    }

    public func removeTOTP(of account: AccountID, completion: @escaping StorageCompletion<Void>) {
        removeTOTP(of: account, audit: nil, mail: [], completion: completion)
    }
}
