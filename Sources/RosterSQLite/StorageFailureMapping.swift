import RosterRuntime
import RosterStorage

// SQLite's failures in the storage boundary's terms. The details (codes, errno, the operation) go to the log
// here, once; what crosses the boundary is a `StorageFailure` that carries no stored value.

extension StoreError {
    /// A full disk is `.full`; anything else is logged as `operation` failing and is `.other`.
    func storageFailure(logging logger: Logger, _ operation: String) -> StorageFailure {
        if isFull { return .full }
        logger.error("\(operation) failed: \(self)")
        return .other
    }
}

extension UserStoreError {
    /// A clash names its field; a store failure is mapped as above.
    func storageFailure(logging logger: Logger) -> StorageFailure {
        switch self {
        case .taken(let field): return .conflict(field)
        case .notFound:
            logger.error("user database write failed: \(self)")
            return .other
        case .store(let store): return store.storageFailure(logging: logger, "user database write")
        case .notArgon2idHash: return StoredPasswordHash.refusal(logging: logger)
        }
    }
}

extension BackupError {
    /// A refused target is logged as a notice (it is the caller's path at fault); a store failure as above.
    func backupFailure(logging logger: Logger, path: String) -> BackupFailure {
        switch self {
        case .refused(let refusal):
            logger.notice("backup to \(path) refused: \(refusal.rawValue)", [("ROSTER_EVENT", "backup_refused")])
            return .refused(refusal)
        case .store(let error):
            return .storage(error.storageFailure(logging: logger, "backup to \(path)"))
        case .source(let error):
            // A shared database that went away or timed out mid-read: worth trying again, not a fault of ours.
            logger.error("backup to \(path) failed reading the database: \(error)", [("ROSTER_EVENT", "backup_failed")])
            return .storage(.unavailable(retryAfterMs: 1_000))
        }
    }
}

/// What a worker's job threw, which may be a `UserStoreError` from an account write or a `StoreError`.
func storageFailure(_ error: any Error, _ operation: String, logging logger: Logger) -> StorageFailure {
    switch error {
    case let error as UserStoreError: return error.storageFailure(logging: logger)
    case let error as StoreError: return error.storageFailure(logging: logger, operation)
    default:
        logger.error("\(operation) failed: \(error)")
        return .other
    }
}
