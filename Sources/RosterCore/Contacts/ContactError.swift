/// Why a contact's fields were refused; `reason` is stable API (the `data.reason` of the failure).
public enum ContactError: Error, Equatable, Hashable, Sendable {
    case invalidName(NameProblem)
    /// Something other than digits, spaces and `+ - ( )`, no digit at all, or longer than 64 characters.
    case invalidPhone
    /// Not the registration pattern, or longer than an address can be.
    case invalidEmail
    case noteTooLong

    /// What is wrong with a name.
    public enum NameProblem: String, Hashable, Sendable {
        case required = "name_required"
        case tooLong = "name_too_long"
    }

    /// The stable snake_case name of this failure.
    public var reason: String {
        switch self {
        case .invalidName(let problem): problem.rawValue
        case .invalidPhone: "invalid_phone"
        case .invalidEmail: "invalid_email"
        case .noteTooLong: "note_too_long"
        }
    }

    /// The contact field at fault, as the methods' params name it.
    public var field: String {
        switch self {
        case .invalidName: "name"
        case .invalidPhone: "phone"
        case .invalidEmail: "email"
        case .noteTooLong: "note"
        }
    }

    /// The wire form: `RosterError` already carries a refused field with its rule's code.
    public var rosterError: RosterError { .invalidField(field: field, code: reason) }
}
