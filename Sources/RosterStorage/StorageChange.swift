/// What another writer of the same database changed, as a backend learns it (PostgreSQL's LISTEN/NOTIFY). A
/// backend that is its database's only writer (SQLite) never reports one: the server hears of its own changes
/// where it makes them, and a backend filters out the echoes of its own.
public enum StorageChange: Equatable, Sendable {
    /// An account was created elsewhere (canonical username and email); the backend's directory has it already.
    case accountCreated(username: String, email: String?)
    /// An account was deleted elsewhere (`account.delete`); the backend's directory has forgotten it already.
    case accountDeleted(id: AccountID, username: String, email: String?)
    /// A token was revoked elsewhere: sessions bound to it end.
    case tokenRevoked(hash: [UInt8])
    /// Every session of this account ends: a lock or a password change elsewhere.
    case sessionsEnded(account: AccountID)
    /// This user's contacts changed elsewhere: an in-memory index of them is stale.
    case contactsChanged(account: AccountID)
    /// Changes may have been missed (the listener was disconnected): re-check everything that depends on them.
    /// The backend has refreshed its own directory before it says so.
    case resync
    /// An account's email changed elsewhere (`account.change_email`): `email` is taken now (nil: it has none),
    /// `previous` is free again (nil: it had none).
    case emailChanged(account: AccountID, username: String, email: String?, previous: String?)
}

/// A backend's connection state, for `admin.stats` (`storage: {backend, state, since}`) and the status line.
public struct StorageState: Equatable, Sendable {
    /// Whether what needs the database can be served now.
    public enum Phase: String, Equatable, Sendable {
        /// Opening, or first connecting.
        case connecting
        /// Serving.
        case up
        /// Cannot reach the database: what needs it answers `storage_unavailable`, and the backend retries.
        case down
    }

    /// `sqlite` or `postgresql`.
    public var backend: String
    public var phase: Phase
    /// Unix milliseconds (the daemon's wall clock) when `phase` last changed.
    public var sinceMs: Int64

    public init(backend: String, phase: Phase, sinceMs: Int64) {
        self.backend = backend
        self.phase = phase
        self.sinceMs = sinceMs
    }
}

/// Where a backend reports what others changed, and how it is connected.
public protocol StorageChangeFeed: AnyObject {
    /// Set by the server before `warmUp`, and called on the loop thread.
    var onChange: ((StorageChange) -> Void)? { get set }
    /// Called on the loop thread whenever `state` changes.
    var onStateChange: ((StorageState) -> Void)? { get set }
    /// The state now.
    var state: StorageState { get }
}
