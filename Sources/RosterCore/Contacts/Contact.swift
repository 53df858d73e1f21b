/// A stored contact: the user's fields plus what the store assigns (id, uid, revision and times, Unix
/// milliseconds).
public struct Contact: Equatable, Hashable, Sendable {
    public var id: Int64
    /// The contact's stable identity across syncs (a CardDAV card's name); `roster-contact-<id>` unless a card
    /// or the store chose another.
    public var uid: String
    /// The change sequence number of its last write (see `ContactRevision`).
    public var revision: Int64
    public var name: String
    public var phone: String?
    public var email: String?
    public var note: String?
    public var createdAt: Int64
    public var updatedAt: Int64

    public init(id: Int64, draft: ContactDraft, createdAt: Int64, updatedAt: Int64, uid: String? = nil,
                revision: Int64 = 0) {
        self.id = id
        self.uid = uid ?? VCard.uid(for: id)
        self.revision = revision
        self.name = draft.name
        self.phone = draft.phone
        self.email = draft.email
        self.note = draft.note
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    /// The strong etag of its card: it changes with every write of the contact.
    public var etag: String { ContactRevision.etag(revision) }

    /// The user's fields alone, e.g. to export or to compare with an imported card.
    public var draft: ContactDraft {
        ContactDraft(name: name, phone: phone, email: email, note: note)
    }
}

/// A contact's user-editable fields before the store gives it an id: what `contacts.add` and imports carry.
public struct ContactDraft: Equatable, Hashable, Sendable {
    public var name: String
    public var phone: String?
    public var email: String?
    public var note: String?

    /// Empty optional fields become `nil` (the contract has no difference between "" and absent) and the
    /// name loses surrounding whitespace. Note line breaks become LF, because vCard can only carry LF and
    /// export followed by import must reproduce the list.
    public init(name: String, phone: String? = nil, email: String? = nil, note: String? = nil) {
        self.name = name.trimmingWhitespace()
        self.phone = phone.flatMap { $0.isEmpty ? nil : $0 }
        self.email = email.flatMap { $0.isEmpty ? nil : $0 }
        self.note = note.flatMap { $0.isEmpty ? nil : ContactDraft.unifiedLineBreaks($0) }
    }

    /// CRLF and a lone CR become LF: the one place line breaks are unified (notes and vCard lines alike).
    static func unifiedLineBreaks(_ text: String) -> String {
        guard text.unicodeScalars.contains("\r") else { return text }
        var scalars = String.UnicodeScalarView()
        var previousWasCR = false
        for scalar in text.unicodeScalars {
            if scalar == "\n" && previousWasCR {
                previousWasCR = false
                continue
            }
            previousWasCR = scalar == "\r"
            scalars.append(previousWasCR ? "\n" : scalar)
        }
        return String(scalars)
    }
}

extension String {
    /// Without Foundation's character sets, so the rule is exactly "Unicode White_Space at either end".
    func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let last = scalars.lastIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        return String(scalars[first...last])
    }
}
