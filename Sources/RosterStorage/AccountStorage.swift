import RosterRuntime

/// Accounts: uniqueness checks for the forms, the credential behind a log-in, and account creation.
public protocol AccountStorage: AnyObject {
    /// Whether an account holds this canonical username. Called on every debounced keystroke: a backend should
    /// answer from memory (its username directory) where it can.
    func isUsernameTaken(_ canonical: String, charge: QueueCharge, completion: @escaping StorageCompletion<Bool>)

    /// Whether an account holds this canonical username, when the backend knows it from memory right now; nil
    /// when only `isUsernameTaken` can tell. Never waits and never fails: it lets `users.check_username`, the
    /// hottest request of all, be answered in place with no completion to allocate. A backend without such a
    /// memory answers nil (the default).
    func knownUsernameTaken(_ canonical: String) -> Bool?

    /// Whether an account holds this canonical email.
    func isEmailTaken(_ canonical: String, charge: QueueCharge, completion: @escaping StorageCompletion<Bool>)

    /// Whether an account answers to this identifier (the log-in form's `identifier` check).
    func accountExists(_ identifier: AccountIdentifier, charge: QueueCharge, completion: @escaping StorageCompletion<Bool>)

    /// The account and its hash, to verify a password with; nil when none answers to `identifier`.
    func credential(for identifier: AccountIdentifier, charge: QueueCharge,
                    completion: @escaping StorageCompletion<Credential?>)

    /// Creates the account durably before answering; `.conflict(field)` when the username or email is held
    /// (also when another writer took it an instant earlier). Never refused by a budget: it follows a hash that
    /// was already paid for. `audit` commits with the account.
    func createAccount(_ account: NewAccount, audit: AuditRecord?, charge: QueueCharge, completion: @escaping StorageCompletion<Account>)

    /// Replaces an account's password hash (an upgrade to the parameters in force). Never refused by a budget.
    func replacePasswordHash(_ hash: String, of account: AccountID, charge: QueueCharge,
                             completion: @escaping StorageCompletion<Void>)
}

extension AccountStorage {
    public func knownUsernameTaken(_ canonical: String) -> Bool? { nil }
}
