/// The log-in form's fields, in the form's order; their rules are at the top of LoginForm.swift.
public enum LoginField: FormField {
    /// A username or an email.
    case username
    case password

    public init?(_ name: FieldName) {
        switch name {
        case .username: self = .username
        case .password: self = .password
        case .confirm, .email, .query: return nil
        }
    }

    public var name: FieldName {
        switch self {
        case .username: .username
        case .password: .password
        }
    }

    public var possibleCodes: [FieldCode] {
        switch self {
        case .username: [.empty, .validating, .available, .notFound, .entered, .checkFailed]
        case .password: [.empty, .entered]
        }
    }
}
