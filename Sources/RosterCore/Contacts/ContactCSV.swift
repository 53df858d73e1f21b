// ContactCSV — contacts as CSV (RFC 4180 with a header row) for `contacts.import` and `contacts.export`.
//
// RULES
//   Export: header `name,phone,email,note`, one record per contact, a field quoted only when it holds a
//   comma, a quote, CR or LF (quotes doubled), every record ending in CRLF; an absent field is empty.
//   Import: the first record is the header: column names are trimmed and case-insensitive, in any order;
//   unknown columns are ignored; the first of a repeated name counts; `name` is required. Line numbers
//   are 1-based and name the line a record starts on. Errors:
//     missing_name_column  no header, or one without `name` (line 1, and nothing is imported)
//     wrong_field_count    a record with more or fewer fields than the header
//     unterminated_quote   a quoted field still open at the end (its record; the records before are kept)
//     validation reasons   name_required, invalid_phone, … for a record whose fields fail the rules
//   A rejected record never stops the import: the records around it are kept.

/// Contacts as RFC 4180 CSV; see the rules above.
public enum ContactCSV {
    public static let header = ["name", "phone", "email", "note"]

    public static func serialize(_ contacts: [Contact]) -> String {
        serialize(drafts: contacts.map(\.draft))
    }

    public static func serialize(drafts: [ContactDraft]) -> String {
        var text = headerLine
        for draft in drafts { text += record(draft) }
        return text
    }

    /// The header record with its CRLF; a file starts with it once, however many pieces it is written in.
    public static var headerLine: String { header.joined(separator: ",") + "\r\n" }

    /// One contact's record with its CRLF.
    public static func record(_ draft: ContactDraft) -> String {
        [draft.name, draft.phone ?? "", draft.email ?? "", draft.note ?? ""]
            .map(CSVRecords.field).joined(separator: ",") + "\r\n"
    }

    public static func parse(_ text: String) -> ContactImportResult {
        let (records, unterminated) = CSVRecords.read(text)
        var result = ContactImportResult()
        guard let headerRecord = records.first else {
            result.errors.append(ContactImportError(line: 1, reason: "missing_name_column"))
            return result
        }
        var columns: [String: Int] = [:]
        for (index, name) in headerRecord.fields.enumerated() {
            let key = name.trimmingWhitespace().lowercased()
            if columns[key] == nil { columns[key] = index }
        }
        guard let nameColumn = columns["name"] else {
            result.errors.append(ContactImportError(line: headerRecord.line, reason: "missing_name_column"))
            return result
        }
        for record in records.dropFirst() {
            guard record.fields.count == headerRecord.fields.count else {
                result.errors.append(ContactImportError(line: record.line, reason: "wrong_field_count"))
                continue
            }
            func value(_ column: String) -> String? { columns[column].map { record.fields[$0] } }
            let draft = ContactDraft(name: record.fields[nameColumn], phone: value("phone"), email: value("email"),
                                     note: value("note"))
            do {
                try draft.validate()
                result.contacts.append(ImportedContact(draft: draft, line: record.line))
            } catch {
                result.errors.append(ContactImportError(line: record.line, reason: error.reason))
            }
        }
        if let unterminated {
            result.errors.append(ContactImportError(line: unterminated.line, reason: "unterminated_quote"))
        }
        return result
    }
}
