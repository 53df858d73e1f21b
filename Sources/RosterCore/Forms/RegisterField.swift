/// The register form's fields, in the form's order; their rules are at the top of RegisterForm.swift.
public enum RegisterField: FormField {
    case username
    case password
    case confirm
    case email

    public init?(_ name: FieldName) {
        switch name {
        case .username: self = .username
        case .password: self = .password
        case .confirm: self = .confirm
        case .email: self = .email
        case .query, .current, .new, .code: return nil
        }
    }

    public var name: FieldName {
        switch self {
        case .username: .username
        case .password: .password
        case .confirm: .confirm
        case .email: .email
        }
    }

    public var possibleCodes: [FieldCode] {
        switch self {
        case .username: [.empty, .validating, .tooShort, .tooLong, .forbiddenCharacters, .disallowedCharacter,
                         .bidiRule, .mixedScript, .taken, .available, .checkFailed]
        case .password: [.empty, .validating, .tooShort, .tooLong, .forbiddenCharacters, .valid, .checkFailed]
            + FieldCode.qualityCodes
        case .confirm: [.empty, .mismatch, .valid]
        case .email: [.empty, .validating, .tooLong, .invalidEmail, .taken, .valid, .checkFailed]
        }
    }
}
