// VCardParser — reading vCards for `contacts.import` (RFC 6350; 3.0 and 2.1 files mostly read too).
//
// RULES
//   Lines end in CRLF, LF or CR; folded lines are unfolded first; blank lines are ignored.
//   Property names are case-insensitive and may carry a group (`item1.TEL`) and parameters (`TEL;TYPE=cell:`).
//   A card runs from BEGIN:VCARD to END:VCARD. It takes FN (or, without a non-blank FN, a name made from N),
//   and the first TEL, EMAIL, NOTE and UID; other properties are ignored. A `tel:` URI loses its scheme.
//   Errors, one per rejected card or stray run, with 1-based line numbers:
//     unexpected_line  a run of lines outside any card (the run's first line)
//     malformed_line   a line in a card with no `name:` shape, or with a parameter that has no name (that
//                      line); the card is rejected
//     missing_end      BEGIN:VCARD inside a card, or the end of the data, before END:VCARD (the card's BEGIN line)
//     name_required    no FN and no usable N (the card's BEGIN line)
//     other validation reasons (invalid_phone, …) at the line of the property at fault
//   Read with `.keepCard` (a card a CardDAV client put), a field that breaks a contact rule does not refuse the
//   card: a phone or email no rule takes is left out of the contact's fields, a name or note past its limit is
//   cut to it; only a card with no name at all (name_required) or broken syntax is refused.
//   A rejected card never stops the import: the cards around it are kept.

/// How a card whose fields break a contact rule is read (see the rules above).
public enum CardFieldRule: Sendable {
    /// The card is refused with the rule's reason (`contacts.import`).
    case refuse
    /// The card is kept and the field left out or cut to its limit (a card a CardDAV client put).
    case keepCard
}

/// Accumulates one card's properties between BEGIN and END.
private struct CardBuilder {
    var start: Int
    var malformedLine: Int?
    var fn: VCardLine?
    var n: VCardLine?
    var tel: VCardLine?
    var email: VCardLine?
    var note: VCardLine?
    var uid: VCardLine?

    mutating func take(_ property: VCardLine) {
        switch property.name {
        case "FN" where fn == nil && !VCardText.unescape(property.value).trimmingWhitespace().isEmpty: fn = property
        case "N" where n == nil: n = property
        case "TEL" where tel == nil: tel = property
        case "EMAIL" where email == nil: email = property
        case "NOTE" where note == nil: note = property
        case "UID" where uid == nil: uid = property
        default: break
        }
    }

    func finish(_ rule: CardFieldRule) -> Result<ImportedContact, ContactImportError> {
        if let malformedLine { return .failure(ContactImportError(line: malformedLine, reason: "malformed_line")) }
        let name = fn.map { VCardText.unescape($0.value) }
            ?? n.map { VCardName.displayName(from: VCardText.components(String(String.UnicodeScalarView($0.value)))
                .map(VCardText.unescape)) }
            ?? ""
        var draft = ContactDraft(name: name, phone: tel.map(Self.phone), email: email.map {
            VCardText.unescape($0.value).trimmingWhitespace()
        }, note: note.map { VCardText.unescape($0.value) })
        if rule == .keepCard { draft = Self.fitted(draft) }
        do {
            try draft.validate()
        } catch {
            return .failure(ContactImportError(line: line(of: error), reason: error.reason))
        }
        let uid = uid.map { VCardText.unescape($0.value) }.flatMap { $0.isEmpty ? nil : $0 }
        return .success(ImportedContact(draft: draft, uid: uid, line: start))
    }

    private func line(of error: ContactError) -> Int {
        switch error {
        case .invalidName(.required): start
        case .invalidName(.tooLong): (fn ?? n)?.line ?? start
        case .invalidPhone: tel?.line ?? start
        case .invalidEmail: email?.line ?? start
        case .noteTooLong: note?.line ?? start
        }
    }

    /// `draft` with each field a contact rule refuses left out (phone, email) or cut to its limit (name, note).
    private static func fitted(_ draft: ContactDraft) -> ContactDraft {
        var fitted = draft
        if fitted.name.count > ContactRules.nameMaxLength {
            fitted.name = String(fitted.name.prefix(ContactRules.nameMaxLength)).trimmingWhitespace()
        }
        if let phone = fitted.phone, !ContactRules.isWellFormedPhone(phone) { fitted.phone = nil }
        if let email = fitted.email,
           email.unicodeScalars.count > EmailRules.maxLength || !EmailRules.isWellFormed(email) {
            fitted.email = nil
        }
        if let note = fitted.note, note.count > ContactRules.noteMaxLength {
            fitted.note = String(note.prefix(ContactRules.noteMaxLength))
        }
        return fitted
    }

    /// `tel:+1-555-0100;ext=7` → `+1-555-0100`: a URI's parameters are not part of the number as typed.
    private static func phone(_ property: VCardLine) -> String {
        let text = VCardText.unescape(property.value).trimmingWhitespace()
        let isURI = property.parameters["VALUE"]?.lowercased() == "uri" || text.lowercased().hasPrefix("tel:")
        guard isURI else { return text }
        let number = text.lowercased().hasPrefix("tel:") ? String(text.dropFirst(4)) : text
        return String(number.prefix { $0 != ";" })
    }
}

extension VCard {
    /// Every valid card, in order, and one error per rejected card or stray run; see the rules above.
    public static func parse(_ text: String, fields rule: CardFieldRule = .refuse) -> ContactImportResult {
        var result = ContactImportResult()
        var card: CardBuilder?
        var inStrayRun = false

        func finish(_ builder: CardBuilder) {
            switch builder.finish(rule) {
            case .success(let contact): result.contacts.append(contact)
            case .failure(let error): result.errors.append(error)
            }
        }

        for (scalars, line) in VCardLine.logicalLines(text) {
            let property = VCardLine(scalars, line: line)
            let value = property.map { String(String.UnicodeScalarView($0.value)).trimmingWhitespace().uppercased() }
            let isBegin = property?.name == "BEGIN" && value == "VCARD"
            let isEnd = property?.name == "END" && value == "VCARD"
            if var current = card {
                if isBegin {
                    result.errors.append(ContactImportError(line: current.start, reason: "missing_end"))
                    card = CardBuilder(start: line)
                } else if isEnd {
                    finish(current)
                    card = nil
                } else if let property {
                    current.take(property)
                    card = current
                } else {
                    if current.malformedLine == nil { current.malformedLine = line }
                    card = current
                }
                continue
            }
            if isBegin {
                card = CardBuilder(start: line)
                inStrayRun = false
            } else if !inStrayRun {
                result.errors.append(ContactImportError(line: line, reason: "unexpected_line"))
                inStrayRun = true
            }
        }
        if let card { result.errors.append(ContactImportError(line: card.start, reason: "missing_end")) }
        return result
    }
}
