import RosterCore

/// App passwords (protocol.md "App passwords"): the extra secrets a CardDAV client logs in with. The storage keeps
/// what a log-in compares against (a keyed hash of the secret, never the secret) and what the owner sees (a name and
/// times); it compares nothing: the server hashes what was typed and compares in constant time. An id is random and
/// unique across the whole database; an account has at most `limit` app passwords (`AppPasswordLimits.perAccount`),
/// held across every daemon on a shared database. A deletion of the account takes its app passwords.
///
/// Times: `createdMs` is the backend's clock (the database's with PostgreSQL), whatever the caller put there;
/// `touchAppPassword`'s `usedMs` is stored as given, the time the server accepted the log-in at.
public protocol AppPasswordStorage {
    /// The account's app passwords, oldest first (by creation, then id), each with its hash.
    func appPasswords(of account: AccountID, completion: @escaping StorageCompletion<[StoredAppPassword]>)

    /// Adds an app password while the account has fewer than `limit`: `.gone` when the account is gone, `.full` at
    /// the cap, in that order, each changing nothing. The addition comes back as stored (`createdMs` the backend's
    /// clock, `lastUsedMs` nil). `audit` (`app_password_added`) commits only with `.added`. On a shared database
    /// the account's row is locked first, so the cap holds for daemons adding at the same instant.
    func addAppPassword(_ appPassword: StoredAppPassword, limit: Int, audit: AuditRecord?,
                        completion: @escaping StorageCompletion<AppPasswordAddition>)

    /// Removes one of the account's app passwords; false when it was not there (another account's id is not
    /// there). `audit` (`app_password_removed`) commits only with true. Never refused by a budget: a removal of a
    /// leaked secret must take effect.
    func removeAppPassword(of account: AccountID, id: String, audit: AuditRecord?,
                           completion: @escaping StorageCompletion<Bool>)

    /// Stores `usedMs` as the app password's last use; false when it is gone. Never refused by a budget: it
    /// follows an accepted log-in.
    func touchAppPassword(of account: AccountID, id: String, usedMs: Int64, completion: @escaping StorageCompletion<Bool>)
}

/// The fixed sizes and caps of app passwords.
public enum AppPasswordLimits {
    /// App passwords one account may hold (protocol.md "Limits of v3").
    public static let perAccount = 20
    /// The characters of a secret as rosterd makes them.
    public static let secretCharacters = 24
    /// The characters of an id as rosterd makes them.
    public static let idCharacters = 16
    /// The characters a stored id may have.
    public static let storedIDCharacters = 1...64
    /// The bytes of a stored hash (keyed BLAKE2b-256).
    public static let hashBytes = 32
    /// A last use is stored at most this often per app password (a DAV client logs in on every sync).
    public static let touchIntervalMs: Int64 = 60_000
}

/// One app password as stored: the hash a log-in compares against, its name and times for its owner.
public struct StoredAppPassword: Equatable, Sendable {
    /// Random, unique across the whole database; what the owner names it by to remove it.
    public var id: String
    public var account: AccountID
    public var name: String
    /// The keyed hash of the secret (`AppPasswords.hash`); the secret itself is never stored.
    public var hash: [UInt8]
    /// Unix milliseconds of its creation, by the backend's clock.
    public var createdMs: Int64
    /// Unix milliseconds of its last log-in; nil until one.
    public var lastUsedMs: Int64?

    public init(id: String, account: AccountID, name: String, hash: [UInt8], createdMs: Int64 = 0,
                lastUsedMs: Int64? = nil) {
        self.id = id
        self.account = account
        self.name = name
        self.hash = hash
        self.createdMs = createdMs
        self.lastUsedMs = lastUsedMs
    }

    /// Whether the fields a backend checks before storing are in range: the id's size and the hash's.
    public var isStorable: Bool {
        AppPasswordLimits.storedIDCharacters.contains(id.unicodeScalars.count) && hash.count == AppPasswordLimits.hashBytes
    }

    /// Whether a log-in at `nowMs` should store its time: never used, or last used a minute or more before.
    public func wantsTouch(at nowMs: Int64) -> Bool {
        guard let lastUsedMs else { return true }
        return nowMs - lastUsedMs >= AppPasswordLimits.touchIntervalMs || nowMs < lastUsedMs
    }
}

/// What `addAppPassword` did.
public enum AppPasswordAddition: Equatable, Sendable {
    case added(StoredAppPassword)
    /// The account holds `limit` app passwords.
    case full
    case gone

    /// Whether the app password was stored (what its audit entry waits for).
    public var isAdded: Bool {
        if case .added = self { true } else { false }
    }
}
