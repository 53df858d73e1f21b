/// Session tokens, known only by their hashes. Idleness is measured on the backend's clock.
public protocol SessionTokenStorage {
    /// Stores a new token's hash for `account`, durably, with the `client` its connection named in
    /// `session.hello` (for `session.list`). Never refused by a budget: it follows a verified password or a new
    /// account. `audit` commits with the token. With a `limit`, the account's oldest idle tokens (least recently
    /// used first) are revoked in the same transaction so that, with the new one, it holds at most
    /// `limit.maxTokens`; the answer is the hashes revoked (announced to the other daemons as a revocation is),
    /// never the new one's.
    func storeToken(hash: [UInt8], for account: AccountID, client: String?, audit: AuditRecord?, limit: TokenLimit?,
                    completion: @escaping StorageCompletion<[[UInt8]]>)

    /// The account behind a token used within the last `idleLimitMs`, moving its last use to now; nil for an
    /// unknown, revoked or idled-out token. `audit` commits with the move only when an unlocked account resumed,
    /// named as that account when it names none (the caller knows the account only from this answer).
    func resumeToken(hash: [UInt8], idleLimitMs: Int64, audit: AuditRecord?,
                     completion: @escaping StorageCompletion<Account?>)

    /// Revokes a token; whether it was there (`audit` commits with it only then). Never refused by a budget: a
    /// log-out must take effect.
    func revokeToken(hash: [UInt8], audit: AuditRecord?, completion: @escaping StorageCompletion<Bool>)
}


extension SessionTokenStorage {
    /// `storeToken` without a limit: nothing else is revoked.
    public func storeToken(hash: [UInt8], for account: AccountID, client: String?, audit: AuditRecord?,
                           completion: @escaping StorageCompletion<Void>) {
        storeToken(hash: hash, for: account, client: client, audit: audit, limit: nil) {
            completion($0.map { _ in () })
        }
    }
}

/// How many tokens one account may hold, and the entry that records the ones a new token pushes out.
public struct TokenLimit: Equatable, Sendable {
    /// The most tokens the account holds once the new one is stored; at least 1.
    public var maxTokens: Int
    /// Committed with the revocations, once, only when one or more tokens went.
    public var revocation: AuditRecord?

    public init(maxTokens: Int, revocation: AuditRecord?) {
        self.maxTokens = max(1, maxTokens)
        self.revocation = revocation
    }

    /// How many of the `held` tokens go before a new one is stored: the oldest idle ones, least recently used first.
    public func excess(held: Int) -> Int { max(0, held - (maxTokens - 1)) }
}
