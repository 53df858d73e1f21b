import RosterCore
import RosterRuntime
import RosterStorage

/// The contacts writes as tests that are not about sessions make them: for a session without a token that never
/// ends, so only the daemon's own flag could stop them (and nothing sets it).
extension ContactStorage {
    public func addContact(_ draft: ContactDraft, for user: AccountID,
                           completion: @escaping StorageCompletion<StoredContact>) {
        addContact(draft, for: user, session: SessionGrant(tokenHash: nil), completion: completion)
    }

    public func updateContact(_ id: Int64, of user: AccountID, with patch: ContactPatch,
                              completion: @escaping StorageCompletion<ContactUpdate>) {
        updateContact(id, of: user, session: SessionGrant(tokenHash: nil), with: patch, completion: completion)
    }

    public func removeContact(_ id: Int64, of user: AccountID, completion: @escaping StorageCompletion<Bool>) {
        removeContact(id, of: user, session: SessionGrant(tokenHash: nil), completion: completion)
    }

    public func importContacts(_ data: String, format: ContactFormat, for user: AccountID,
                               completion: @escaping StorageCompletion<ContactImportOutcome>) {
        importContacts(data, format: format, for: user, session: SessionGrant(tokenHash: nil),
                       completion: completion)
    }
}
