/// The limits on a contact's fields (protocol.md "Limits") and the check that applies them.
public enum ContactRules {
    /// Counted in characters as the user sees them (grapheme clusters), after trimming.
    public static let nameMaxLength = 200
    public static let phoneMaxLength = 64
    public static let noteMaxLength = 4_000

    /// The first failing field in the order name, phone, email, note, so a form can point at one field.
    public static func validate(_ draft: ContactDraft) throws(ContactError) {
        let name = draft.name.trimmingWhitespace()
        if name.isEmpty { throw .invalidName(.required) }
        if name.count > nameMaxLength { throw .invalidName(.tooLong) }
        if let phone = draft.phone, !isWellFormedPhone(phone) { throw .invalidPhone }
        if let email = draft.email,
           email.unicodeScalars.count > EmailRules.maxLength || !EmailRules.isWellFormed(email) {
            throw .invalidEmail
        }
        if let note = draft.note, note.count > noteMaxLength { throw .noteTooLong }
    }

    /// Digits (any script's decimal digits, so a full-width ０ typed through an IME counts), spaces and
    /// `+ - ( )`, with at least one digit: a phone number made only of punctuation cannot be dialled.
    public static func isWellFormedPhone(_ phone: String) -> Bool {
        guard phone.count <= phoneMaxLength else { return false }
        var sawDigit = false
        for scalar in phone.unicodeScalars {
            if scalar.properties.numericType == .decimal {
                sawDigit = true
            } else if !" +-()".unicodeScalars.contains(scalar) {
                return false
            }
        }
        return sawDigit
    }
}

extension ContactDraft {
    /// Throws the first rule the draft breaks; see `ContactRules`.
    public func validate() throws(ContactError) {
        try ContactRules.validate(self)
    }
}
