/// Accounts: uniqueness checks for the forms, the credential behind a log-in, and account creation.
public protocol AccountStorage {
    /// Whether an account holds this canonical username. Called on every debounced keystroke: a backend should
    /// answer from memory (its username directory) where it can.
    func isUsernameTaken(_ canonical: String, completion: @escaping StorageCompletion<Bool>)

    /// Whether an account holds this canonical email.
    func isEmailTaken(_ canonical: String, completion: @escaping StorageCompletion<Bool>)

    /// Whether an account answers to this identifier (the log-in form's `identifier` check).
    func accountExists(_ identifier: AccountIdentifier, completion: @escaping StorageCompletion<Bool>)

    /// The account and its hash, to verify a password with; nil when none answers to `identifier`.
    func credential(for identifier: AccountIdentifier, completion: @escaping StorageCompletion<Credential?>)

    /// Creates the account durably before answering; `.conflict(field)` when the username or email is held
    /// (also when another writer took it an instant earlier). Never refused by a budget: it follows a hash that
    /// was already paid for. `audit` and `mail` (a verification code, when an email is given) commit with the
    /// account; the mails are filed under its new id.
    func createAccount(_ account: NewAccount, audit: AuditRecord?, mail: [QueuedMail],
                       completion: @escaping StorageCompletion<Account>)

    /// Replaces an account's password hash (an upgrade to the parameters in force). Never refused by a budget.
    func replacePasswordHash(_ hash: String, of account: AccountID, completion: @escaping StorageCompletion<Void>)
}
