/// The two interchange formats of `contacts.import` and `contacts.export`.
public enum ContactFormat: String, Sendable {
    case vcard
    case csv

    public func parse(_ data: String) -> ContactImportResult {
        switch self {
        case .vcard: VCard.parse(data)
        case .csv: ContactCSV.parse(data)
        }
    }

    /// One contact's card or record; a CSV file also needs `ContactCSV.headerLine` before its first.
    public func serialize(_ contact: Contact) -> String {
        switch self {
        case .vcard: VCard.card(contact.draft, uid: contact.uid)
        case .csv: ContactCSV.record(contact.draft)
        }
    }
}
