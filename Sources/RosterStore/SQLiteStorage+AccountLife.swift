import RosterRuntime
import RosterStorage

// SKELETON (issue 15): every call answers `.other` until the storage helper's branch replaces this file.
extension SQLiteStorage {
    public func security(of account: AccountID, charge: QueueCharge, completion: @escaping StorageCompletion<AccountSecurity?>) {
        completion(.failure(.other))
    }
    public func credential(of account: AccountID, charge: QueueCharge, completion: @escaping StorageCompletion<Credential?>) {
        completion(.failure(.other))
    }
    public func changePassword(of account: AccountID, to passwordHash: String, keeping: [UInt8]?, charge: QueueCharge,
                               completion: @escaping StorageCompletion<[[UInt8]]>) {
        completion(.failure(.other))
    }
    public func changeEmail(of account: AccountID, to email: String?, charge: QueueCharge,
                            completion: @escaping StorageCompletion<Account?>) {
        completion(.failure(.other))
    }
    public func deleteAccount(_ account: AccountID, failureKeys: [String], charge: QueueCharge,
                              completion: @escaping StorageCompletion<DeletedAccount?>) {
        completion(.failure(.other))
    }
    public func sessions(of account: AccountID, idleLimitMs: Int64, charge: QueueCharge,
                         completion: @escaping StorageCompletion<[StoredSession]>) {
        completion(.failure(.other))
    }
    public func revokeTokens(of account: AccountID, except keeping: [UInt8]?, charge: QueueCharge,
                             completion: @escaping StorageCompletion<[[UInt8]]>) {
        completion(.failure(.other))
    }
    public func replaceRecoveryCodes(of account: AccountID, hashes: [[UInt8]], charge: QueueCharge,
                                     completion: @escaping StorageCompletion<Void>) {
        completion(.failure(.other))
    }
    public func redeemRecoveryCode(of account: AccountID, codeHash: [UInt8], newPasswordHash: String, charge: QueueCharge,
                                   completion: @escaping StorageCompletion<[[UInt8]]?>) {
        completion(.failure(.other))
    }
    public func storePendingTOTP(of account: AccountID, sealed: [UInt8], charge: QueueCharge,
                                 completion: @escaping StorageCompletion<Void>) {
        completion(.failure(.other))
    }
    public func confirmTOTP(of account: AccountID, step: Int64, charge: QueueCharge, completion: @escaping StorageCompletion<Bool>) {
        completion(.failure(.other))
    }
    public func acceptTOTPStep(of account: AccountID, step: Int64, charge: QueueCharge,
                               completion: @escaping StorageCompletion<Bool>) {
        completion(.failure(.other))
    }
    public func removeTOTP(of account: AccountID, charge: QueueCharge, completion: @escaping StorageCompletion<Void>) {
        completion(.failure(.other))
    }
}
