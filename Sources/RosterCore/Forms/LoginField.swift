/// The log-in form's fields, in the form's order; their rules are at the top of LoginForm.swift.
public enum LoginField: FormField {
    /// A username or an email.
    case username
    case password
    /// The one-time (TOTP) code, enabled once a submit answered `code_required`.
    case code

    public init?(_ name: FieldName) {
        switch name {
        case .username: self = .username
        case .password: self = .password
        case .code: self = .code
        case .confirm, .email, .query, .current, .new: return nil
        }
    }

    public var name: FieldName {
        switch self {
        case .username: .username
        case .password: .password
        case .code: .code
        }
    }

    public var possibleCodes: [FieldCode] {
        switch self {
        case .username: [.empty, .validating, .available, .notFound, .entered, .checkFailed]
        case .password: [.empty, .entered]
        case .code: [.empty, .notSixDigits, .valid]
        }
    }
}
