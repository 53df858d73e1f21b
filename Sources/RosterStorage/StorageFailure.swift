import RosterCore
import RosterRuntime

/// Why a storage call did not do what it was asked, in terms any backend can give. A backend logs its own
/// details (SQLite codes, a server's message) before it answers with one of these; none carries a stored value.
public enum StorageFailure: Error, Equatable, Sendable {
    /// The disk or the database is full: nothing was written.
    case full
    /// The backend cannot be reached or is not open; retrying later may work.
    case unavailable(retryAfterMs: Int64)
    /// A unique field is held by another account already.
    case conflict(AccountField)
    /// A budget refused the work before it started (`busy` with a hint).
    case busy(retryAfterMs: Int64)
    /// The session the work was asked for ended before the work's turn came (see `SessionGrant`): nothing was
    /// written.
    case revoked
    /// Anything else; the backend has logged it.
    case other

    /// What a client is told. Exactly one place maps storage to the wire's reasons.
    public var rosterError: RosterError {
        switch self {
        case .full: .storageFull
        case .unavailable(let retryAfterMs): .storageUnavailable(retryAfterMs: retryAfterMs)
        case .conflict(let field): .taken(field: field.rawValue)
        case .busy(let retryAfterMs): .busy(retryAfterMs: retryAfterMs)
        case .revoked: .unauthenticated
        case .other: .internal
        }
    }
}

/// How every storage call answers: once, on the loop thread, and never before the call has returned unless the
/// backend could answer from memory (a caller must cope with both, and must not rely on either).
public typealias StorageCompletion<T> = (Result<T, StorageFailure>) -> Void

extension StorageFailure {
    /// What every call made to a backend after its `stop()` answers.
    public static let stopped = StorageFailure.unavailable(retryAfterMs: 1_000)

    /// What a read or an export answers when its caller gave up on it (`cancelled` set) before it started: it
    /// is skipped, and the caller, which no longer waits for it, drops the answer.
    public static func skipped(_ cancelled: Locked<Bool>) -> StorageFailure? {
        cancelled.withLock { $0 } ? .busy(retryAfterMs: 0) : nil
    }
}
