/// A mailed code as a backend holds it: one per account and purpose.
public struct StoredMailCode: Equatable, Sendable {
    public var codeHash: [UInt8]
    public var expiresAtMs: Int64
    public var triesLeft: Int
    /// The address it went to.
    public var email: String
    /// The backend's clock when it was made: the next one of its purpose waits from here.
    public var createdAtMs: Int64

    public init(codeHash: [UInt8], expiresAtMs: Int64, triesLeft: Int, email: String, createdAtMs: Int64) {
        self.codeHash = codeHash
        self.expiresAtMs = expiresAtMs
        self.triesLeft = triesLeft
        self.email = email
        self.createdAtMs = createdAtMs
    }

    /// A new code as it is stored at `nowMs`, with every try left.
    public init(_ code: NewMailCode, createdAtMs: Int64) {
        self.init(codeHash: code.codeHash, expiresAtMs: code.expiresAtMs, triesLeft: MailLimits.triesPerCode,
                  email: code.email, createdAtMs: createdAtMs)
    }
}

/// What one try of a code came to, by `StoredMailCode.tried`.
public enum MailCodeTry: Equatable, Sendable {
    /// Right: the code is used up, and it went to this address.
    case right(email: String)
    /// Wrong: this many tries are left (0: the code is dead now).
    case wrong(triesLeft: Int)
    /// No live code to try: used, expired, out of tries, or mailed to an address the account no longer has.
    case noLiveCode
}

/// How a try of a mailed code is judged, written once for the backends that judge it in Swift (PostgreSQL says
/// the same in its one statement): a code is live while unused, unexpired at `nowMs` (`expiresAtMs` is its first
/// dead millisecond), with tries left, and still addressed to the account's email (compared as the email column
/// does, ASCII letters without case); a right one is used up, a wrong one costs a try.
extension StoredMailCode {
    /// Whether this code can still be tried at `nowMs` by an account whose email is `accountEmail`.
    public func isLive(atMs nowMs: Int64, accountEmail: String?) -> Bool {
        guard triesLeft > 0, nowMs < expiresAtMs, let accountEmail else { return false }
        return UsernameKey.folded(accountEmail) == UsernameKey.folded(email)
    }

    /// What trying `codeHash` at `nowMs` comes to, and the code as it is stored after (nil: unchanged).
    public func tried(_ codeHash: [UInt8], atMs nowMs: Int64,
                      accountEmail: String?) -> (outcome: MailCodeTry, after: StoredMailCode?) {
        guard isLive(atMs: nowMs, accountEmail: accountEmail) else { return (.noLiveCode, nil) }
        var after = self
        if codeHash == self.codeHash {
            after.triesLeft = 0
            return (.right(email: email), after)
        }
        after.triesLeft -= 1
        return (.wrong(triesLeft: after.triesLeft), after)
    }
}
