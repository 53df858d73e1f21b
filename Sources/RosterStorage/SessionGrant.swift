import RosterRuntime

/// The logged-in session a contacts write was asked for, checked again when the write's turn comes, so that a
/// write queued before the session ended (a log-out, a revoked token, a password change, a lock, a deletion)
/// writes nothing and answers `StorageFailure.revoked`.
///
/// Two checks, because each misses what the other sees. The flag is set on the loop the moment the daemon ends
/// the session, and costs a lock to read, so a queue of imports stops at once without being parsed. The token
/// check runs in the write's own transaction (the token still stored, for this user, whose account is not
/// locked): it sees a revocation that committed before the daemon's loop heard of it, or on another daemon
/// sharing the database, and no revocation can commit between the check and the write.
public final class SessionGrant: Sendable {
    /// The hash of the session's token; nil for a session that holds none (a log-in whose token could not be
    /// stored), which only the flag can end.
    public let tokenHash: [UInt8]?
    private let endedFlag = Locked(false)

    public init(tokenHash: [UInt8]?) {
        self.tokenHash = tokenHash
    }

    /// Whether the daemon ended the session.
    public var isEnded: Bool { endedFlag.withLock { $0 } }

    /// Called on the loop when the session ends; every write queued for it from then on writes nothing.
    public func end() {
        endedFlag.withLock { $0 = true }
    }
}
