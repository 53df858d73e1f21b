/// A contact in a page of search results, with what of it the query matched (nil: nothing to mark).
public struct FoundContact: Equatable, Sendable {
    public let contact: Contact
    public let match: ContactMatch?

    /// `keys` are those the index holds for the contact; without them (the list, or a contact gone from the
    /// index meanwhile) there is no match to describe.
    public init(_ contact: Contact, query: String, keys: ContactSearchKeys?) {
        self.contact = contact
        match = keys.flatMap { ContactMatch.describe(query: query, name: contact.name, phone: contact.phone, keys: $0) }
    }
}

/// One page of a search: the first contacts that matched, and how many matched in all.
public struct ContactsPage: Equatable, Sendable {
    public let items: [FoundContact]
    public let total: Int

    public init(items: [FoundContact], total: Int) {
        self.items = items
        self.total = total
    }
}
