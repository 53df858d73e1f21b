/// Every step of Roster's schema history, oldest first: the one list every backend follows, so that the
/// backends' histories cannot drift apart by hand. A backend supplies, for each step, the migration it records
/// (its own name, never changed once shipped, and its SQL), or none where an earlier migration of its own made
/// the step already; an exhaustive `switch` over the steps is how it supplies them, so a backend that lacks one
/// does not build. Append only: a new step goes last, and each backend adds its migration for it.
public enum SchemaStep: String, CaseIterable, Sendable {
    /// Accounts: canonical username, display name, email, password hash.
    case users
    /// Session tokens by hash.
    case sessionTokens
    /// Failed log-ins per rate-limit key.
    case loginFailures
    /// Contacts with their precomputed search keys.
    case contacts
    /// The index an import finds exact duplicates through.
    case contactsByFoldedName
    /// A token's client, recovery codes and TOTP.
    case accountLife
    /// An administrator's lock and the last log-in.
    case adminUsers
    /// The append-only audit log.
    case audit
    /// The address a trusted gateway spoke for, in the audit log.
    case auditRemote
    /// The check value of the key file the database was first served with.
    case keyCheck
    /// The outbox, the mailed codes, and whether an account's email is verified.
    case mail
    /// Passkeys (WebAuthn credentials) and each account's WebAuthn user handle.
    case passkeys
    /// How a `login` entry's log-in was proved (password, passkey, recovery; app_password since), in the audit log.
    case auditMethod
    /// Contacts by uid with the card a client sent, each user's change sequence, and removals' tombstones.
    case contactCards
    /// App passwords: the extra secrets a CardDAV client logs in with, as keyed hashes.
    case appPasswords
}
