import RosterCore
import RosterStore

extension StoreError {
    /// What a client is told when the store fails: a full disk is `storage_full`; anything else is logged and `internal`.
    func rosterError(logger: Logger, _ operation: String = "user database write") -> RosterError {
        if isFull { return .storageFull }
        logger.error("\(operation) failed: \(self)")
        return .internal
    }
}

extension UserStoreError {
    /// A clash names its field; a store failure is mapped as above.
    func rosterError(logger: Logger) -> RosterError {
        switch self {
        case .taken(let field): return .taken(field: field.rawValue)
        case .notFound: return .notFound
        case .store(let store): return store.rosterError(logger: logger, "user database write")
        case .notArgon2idHash:
            logger.error("refused to store a password hash that is not Argon2id")
            return .internal
        }
    }
}
