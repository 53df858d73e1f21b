/// The rows `rosterd --copy-database` moves between backends, every column as it is stored (hashes as they are,
/// ids kept so that what refers to them still does). Issues 15 and 16 add codes, TOTP and audit entries.
public enum CopyBatch: Sendable {
    case accounts([CopiedAccount])
    case tokens([CopiedToken])
    case failures([CopiedFailure])
    /// Contacts with the search keys written with them, each with its owner.
    case contacts([(account: AccountID, contact: StoredContact)])
}

/// One account as a copy moves it, with its password hash.
public struct CopiedAccount: Equatable, Sendable {
    public var account: Account
    public var passwordHash: String

    public init(account: Account, passwordHash: String) {
        self.account = account
        self.passwordHash = passwordHash
    }
}

/// One session token as a copy moves it: its hash only.
public struct CopiedToken: Equatable, Sendable {
    public var hash: [UInt8]
    public var account: AccountID
    public var createdAtMs: Int64
    public var lastUsedAtMs: Int64

    public init(hash: [UInt8], account: AccountID, createdAtMs: Int64, lastUsedAtMs: Int64) {
        self.hash = hash
        self.account = account
        self.createdAtMs = createdAtMs
        self.lastUsedAtMs = lastUsedAtMs
    }
}

/// One failed log-in of a rate-limit key.
public struct CopiedFailure: Equatable, Sendable {
    public var key: String
    public var atMs: Int64

    public init(key: String, atMs: Int64) {
        self.key = key
        self.atMs = atMs
    }
}

/// How many rows of each kind a database holds: a copy compares the target's with the source's at the end.
public struct CopyCounts: Equatable, Sendable, CustomStringConvertible {
    public var accounts = 0
    public var tokens = 0
    public var failures = 0
    public var contacts = 0

    public init(accounts: Int = 0, tokens: Int = 0, failures: Int = 0, contacts: Int = 0) {
        self.accounts = accounts
        self.tokens = tokens
        self.failures = failures
        self.contacts = contacts
    }

    public var total: Int { accounts + tokens + failures + contacts }

    public var description: String {
        "\(accounts) accounts, \(tokens) tokens, \(failures) failed log-ins, \(contacts) contacts"
    }
}

/// Why a copy stopped. Nothing is committed to the target past the batch that failed.
public enum CopyError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The target holds rows already: a copy never merges.
    case targetNotEmpty(CopyCounts)
    /// The source or target could not be opened or read; the backend's own words.
    case failed(String)
    /// The target's counts differ from the source's after the copy.
    case countsDiffer(source: CopyCounts, target: CopyCounts)

    public var description: String {
        switch self {
        case .targetNotEmpty(let counts): "the target is not empty (\(counts)); a copy goes only into an empty database"
        case .failed(let why): why
        case .countsDiffer(let source, let target): "counts differ after the copy: source \(source), target \(target)"
        }
    }
}

/// A database read whole for a copy, offline (blocking calls, no loop), in a fixed order: accounts before what
/// refers to them.
public protocol CopySource: AnyObject {
    func counts() throws(CopyError) -> CopyCounts
    /// Hands every row to `body` in batches of at most `batchSize`, accounts first.
    func readAll(batchSize: Int, _ body: (CopyBatch) throws(CopyError) -> Void) throws(CopyError)
}

/// A database written by a copy, offline. Each batch commits on its own; `finish` makes the target usable (id
/// sequences past the copied ids).
public protocol CopyTarget: AnyObject {
    func counts() throws(CopyError) -> CopyCounts
    func write(_ batch: CopyBatch) throws(CopyError)
    func finish() throws(CopyError)
}
