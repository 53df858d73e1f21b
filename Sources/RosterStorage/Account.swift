import RosterCore

/// An account's stable id, as every backend hands it out.
public typealias AccountID = Int64

/// An account as the server sees it: who it is, never its password hash.
public struct Account: Equatable, Sendable {
    public var id: AccountID
    /// The PRECIS-canonical username, unique without regard to case.
    public var username: String
    /// The name as it was registered, for display.
    public var display: String
    public var email: String?
    /// Unix time in milliseconds, by the backend's clock.
    public var createdAtMs: Int64
    /// An administrator locked it (protocol.md §Administering users): log-in, resume and recovery answer `locked`.
    public var locked: Bool
    /// A code mailed to `email` came back (protocol.md §Storage): false from creation and again whenever the email
    /// changes, true only through `MailStorage.verifyEmail`.
    public var emailVerified: Bool

    public init(id: AccountID, username: String, display: String, email: String?, createdAtMs: Int64,
                locked: Bool = false, emailVerified: Bool = false) {
        self.id = id
        self.username = username
        self.display = display
        self.email = email
        self.createdAtMs = createdAtMs
        self.locked = locked
        self.emailVerified = emailVerified
    }
}

/// An account with its stored password hash, read only to verify a password and then dropped: it is never kept
/// in a session, an event or an answer.
public struct Credential: Sendable {
    public var account: Account
    /// An `$argon2id$` string.
    public var passwordHash: String
    /// The confirmed TOTP secret: log-in needs a code too.
    public var totp: TOTPSeal?

    public init(account: Account, passwordHash: String, totp: TOTPSeal? = nil) {
        self.account = account
        self.passwordHash = passwordHash
        self.totp = totp
    }
}

/// An account to create: the hash was computed off the loop before the backend sees it.
public struct NewAccount: Sendable {
    public var username: String
    public var display: String
    public var email: String?
    public var passwordHash: String

    public init(username: String, display: String, email: String?, passwordHash: String) {
        self.username = username
        self.display = display
        self.email = email
        self.passwordHash = passwordHash
    }
}

/// How a log-in names its account: a canonical username, or an email when it holds an `@`.
public enum AccountIdentifier: Equatable, Hashable, Sendable {
    case username(String)
    case email(String)

    /// The log-in form's rule: one field takes either.
    public init(loginIdentifier canonical: String) {
        self = canonical.contains("@") ? .email(canonical) : .username(canonical)
    }
}

/// A field that must be unique across accounts.
public enum AccountField: String, Equatable, Sendable {
    case username
    case email
}
