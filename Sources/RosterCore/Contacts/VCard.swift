/// vCard 4.0 export (RFC 6350): one card per contact with FN, N, TEL, EMAIL, NOTE and UID, escaped, folded
/// at 75 octets, CRLF line endings. `VCard.parse` reads it back.
public enum VCard {
    /// A stable UID per stored contact: a `urn:uuid:` needs randomness or hashing Core does not do, and the
    /// id already identifies the contact within its owner's list.
    public static func uid(for id: Int64) -> String { "roster-contact-\(id)" }

    public static func serialize(_ contacts: [Contact]) -> String {
        contacts.map { card($0.draft, uid: $0.uid) }.joined()
    }

    /// Cards without UID, e.g. for drafts that were never stored.
    public static func serialize(drafts: [ContactDraft]) -> String {
        drafts.map { card($0, uid: nil) }.joined()
    }

    /// One card. TEL is written as text (`VALUE=text`) because the number is kept as the user typed it,
    /// which is rarely a valid `tel:` URI; UID likewise, since "roster-contact-7" is no URI.
    public static func card(_ draft: ContactDraft, uid: String?) -> String {
        var lines = ["BEGIN:VCARD", "VERSION:4.0"]
        if let uid { lines.append("UID;VALUE=text:" + VCardText.escape(uid)) }
        lines.append("FN:" + VCardText.escape(draft.name))
        lines.append("N:" + VCardName.components(of: draft.name).map(VCardText.escape).joined(separator: ";"))
        if let phone = draft.phone { lines.append("TEL;VALUE=text:" + VCardText.escape(phone)) }
        if let email = draft.email { lines.append("EMAIL:" + VCardText.escape(email)) }
        if let note = draft.note { lines.append("NOTE:" + VCardText.escape(note)) }
        lines.append("END:VCARD")
        return lines.map(VCardText.fold).joined()
    }
}
