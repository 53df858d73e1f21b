import RosterCore
import RosterProtocol

/// A contact as the daemon sends it, with the fields rosterctl shows.
struct ContactRecord: Equatable {
    let id: Int64
    let name: String
    let phone: String?
    let email: String?
    let note: String?
    /// The daemon's object as it came, times included, for `--json`.
    let raw: JSONValue

    /// Reads one contact object; nil if it has no id or name (then it is not a contact).
    init?(_ value: JSONValue) {
        guard let id = value["id"]?.int64Value, let name = value["name"]?.stringValue else { return nil }
        raw = value
        self.id = id
        self.name = name
        phone = value["phone"]?.stringValue
        email = value["email"]?.stringValue
        note = value["note"]?.stringValue
    }

    init(id: Int64, name: String, phone: String? = nil, email: String? = nil, note: String? = nil) {
        self.id = id
        self.name = name
        self.phone = phone
        self.email = email
        self.note = note
        raw = ["id": .int(id), "name": .string(name), "phone": .optional(phone), "email": .optional(email), "note": .optional(note)]
    }

    /// Every contact of an `items` array, skipping anything that is not one.
    static func list(_ items: JSONValue?) -> [ContactRecord] {
        (items?.arrayValue ?? []).compactMap(ContactRecord.init)
    }

    /// The contact on several lines, for a person who picked it: every field the contact has.
    var detail: [String] {
        var lines = ["ID:    \(id)", "Name:  \(oneLine(name))"]
        if let phone { lines.append("Phone: \(oneLine(phone))") }
        if let email { lines.append("Email: \(oneLine(email))") }
        if let note {
            // A note may hold line breaks; indenting the rest keeps them inside the note.
            let noteLines = note.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
            lines.append("Note:  " + noteLines.map { FreeText.escaped(String($0)) }.joined(separator: "\n       "))
        }
        return lines
    }
}

/// The contacts as the table of `contacts list`: ID, NAME, PHONE, EMAIL, with `-` for what a contact lacks.
func contactsTable(_ contacts: [ContactRecord]) -> Table {
    var table = Table(columns: ["ID", "NAME", "PHONE", "EMAIL"])
    // Table shows each cell escaped, as every table does.
    table.rows = contacts.map { [String($0.id), $0.name, $0.phone ?? "-", $0.email ?? "-"] }
    return table
}

/// A field shown in one cell of the interactive list, where highlights count scalars: each control, line break or
/// bidi control (`FreeText.isRefused`: a tab or a line break from an import would break the columns, an override
/// would reorder them) is shown as a space, one for one.
func oneLine(_ text: String) -> String {
    guard text.unicodeScalars.contains(where: FreeText.isRefused) else { return text }
    return String(String.UnicodeScalarView(text.unicodeScalars.map { FreeText.isRefused($0) ? " " : $0 }))
}
