/// One stored account, as read from `users`.
public struct UserRecord: Equatable, Sendable {
    /// The row id; stable for the life of the account.
    public var id: Int64
    /// The PRECIS-canonical username (unique, compared case-insensitively).
    public var canonical: String
    /// The username as the user typed it.
    public var display: String
    /// The e-mail address, if one was given (unique, compared case-insensitively).
    public var email: String?
    /// The `$argon2id$…` hash string.
    public var passwordHash: String
    /// Creation time in Unix milliseconds.
    public var createdAt: Int64
    /// Whether `locked_at` is set; read only where a log-in or a resume needs it, not in `columns`.
    public var locked: Bool
    /// Whether a code mailed to `email` came back since it was set.
    public var emailVerified: Bool

    /// Makes a record from its column values.
    public init(id: Int64, canonical: String, display: String, email: String?, passwordHash: String, createdAt: Int64,
                locked: Bool = false, emailVerified: Bool = false) {
        self.id = id
        self.canonical = canonical
        self.display = display
        self.email = email
        self.passwordHash = passwordHash
        self.createdAt = createdAt
        self.locked = locked
        self.emailVerified = emailVerified
    }
}

extension UserRecord {
    /// The column list `init(row:)` expects, in order (SessionTokenStore spells it out with a table prefix).
    static let columns = "id, canonical, display, email, password_hash, created_at, email_verified"

    /// Reads a record from the current row of a statement selecting `columns`, starting at `offset`.
    init(row: Statement, offset: Int = 0) {
        self.init(
            id: row.int64(at: offset),
            canonical: row.string(at: offset + 1) ?? "",
            display: row.string(at: offset + 2) ?? "",
            email: row.string(at: offset + 3),
            passwordHash: row.string(at: offset + 4) ?? "",
            createdAt: row.int64(at: offset + 5),
            emailVerified: row.int64(at: offset + 6) != 0)
    }
}
