import RosterRuntime

/// Session tokens, known only by their hashes. Idleness is measured on the backend's clock.
public protocol SessionTokenStorage: AnyObject {
    /// Stores a new token's hash for `account`, durably, with the `client` its connection named in
    /// `session.hello` (for `session.list`). Never refused by a budget: it follows a verified password or a new
    /// account.
    func storeToken(hash: [UInt8], for account: AccountID, client: String?, charge: QueueCharge,
                    completion: @escaping StorageCompletion<Void>)

    /// The account behind a token used within the last `idleLimitMs`, moving its last use to now; nil for an
    /// unknown, revoked or idled-out token.
    func resumeToken(hash: [UInt8], idleLimitMs: Int64, charge: QueueCharge,
                     completion: @escaping StorageCompletion<Account?>)

    /// Revokes a token; whether it was there. Never refused by a budget: a log-out must take effect.
    func revokeToken(hash: [UInt8], charge: QueueCharge, completion: @escaping StorageCompletion<Bool>)
}

extension SessionTokenStorage {
    /// A token of a connection that named no client.
    public func storeToken(hash: [UInt8], for account: AccountID, charge: QueueCharge,
                           completion: @escaping StorageCompletion<Void>) {
        storeToken(hash: hash, for: account, client: nil, charge: charge, completion: completion)
    }
}
