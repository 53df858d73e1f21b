import RosterCore
import RosterRuntime
import RosterStorage
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

extension BackupError {
    /// A refused target is the `path` param's fault, with its own reason; a store failure is mapped as above.
    func rosterError(logger: Logger, path: String) -> RosterError {
        switch self {
        case .refused(let refusal):
            logger.notice("backup to \(path) refused: \(refusal.rawValue)", [("ROSTER_EVENT", "backup_refused")])
            return .invalidParams(param: "path", problem: refusal.problem)
        case .store(let error):
            return error.rosterError(logger: logger, "backup to \(path)")
        }
    }
}

extension BackupRefusal {
    /// The wire's name for it: the same stable string.
    var problem: ParamProblem {
        switch self {
        case .targetExists: .targetExists
        case .notARegularFile: .notARegularFile
        case .liveDatabase: .liveDatabase
        case .badDirectory: .badDirectory
        }
    }
}
