/// One card or row an import could not take, with the line to show the user (1-based) and a stable reason.
public struct ContactImportError: Error, Equatable, Hashable, Sendable {
    public var line: Int
    public var reason: String

    public init(line: Int, reason: String) {
        self.line = line
        self.reason = reason
    }
}

/// A card or row that passed validation.
public struct ImportedContact: Equatable, Hashable, Sendable {
    public var draft: ContactDraft
    /// The vCard's UID, if it had one; CSV has none.
    public var uid: String?
    /// Where the card or row starts, 1-based.
    public var line: Int

    public init(draft: ContactDraft, uid: String? = nil, line: Int) {
        self.draft = draft
        self.uid = uid
        self.line = line
    }
}

/// What parsing an import gives: the valid contacts in file order, and every rejected card or row.
public struct ContactImportResult: Equatable, Sendable {
    public var contacts: [ImportedContact]
    public var errors: [ContactImportError]

    public init(contacts: [ImportedContact] = [], errors: [ContactImportError] = []) {
        self.contacts = contacts
        self.errors = errors
    }

    /// The drafts alone, for callers that need no UID or line.
    public var drafts: [ContactDraft] { contacts.map(\.draft) }
}
