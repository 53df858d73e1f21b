import RosterStorage

/// Why a user write was refused. Never carries the username, e-mail or hash involved.
public enum UserStoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Another account already has this username or e-mail (compared case-insensitively).
    case taken(AccountField)
    /// The hash is not one `StoredPasswordHash` lets be stored.
    case notArgon2idHash
    /// No account has the given id.
    case notFound
    /// The database failed.
    case store(StoreError)

    public var description: String {
        switch self {
        case let .taken(field): return "users: \(field.rawValue) is taken"
        case .notArgon2idHash: return "users: password hash is not an Argon2id string"
        case .notFound: return "users: no such user"
        case let .store(error): return error.description
        }
    }
}
