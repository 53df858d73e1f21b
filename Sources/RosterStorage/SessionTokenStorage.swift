import RosterRuntime

/// Session tokens, known only by their hashes. Idleness is measured on the backend's clock.
public protocol SessionTokenStorage: AnyObject {
    /// Stores a new token's hash for `account`, durably, with the `client` its connection named in
    /// `session.hello` (for `session.list`). Never refused by a budget: it follows a verified password or a new
    /// account. `audit` commits with the token.
    func storeToken(hash: [UInt8], for account: AccountID, client: String?, audit: AuditRecord?, charge: QueueCharge,
                    completion: @escaping StorageCompletion<Void>)

    /// The account behind a token used within the last `idleLimitMs`, moving its last use to now; nil for an
    /// unknown, revoked or idled-out token. `audit` commits with the move only when an unlocked account resumed,
    /// named as that account when it names none (the caller knows the account only from this answer).
    func resumeToken(hash: [UInt8], idleLimitMs: Int64, audit: AuditRecord?, charge: QueueCharge,
                     completion: @escaping StorageCompletion<Account?>)

    /// Revokes a token; whether it was there (`audit` commits with it only then). Never refused by a budget: a
    /// log-out must take effect.
    func revokeToken(hash: [UInt8], audit: AuditRecord?, charge: QueueCharge, completion: @escaping StorageCompletion<Bool>)
}

