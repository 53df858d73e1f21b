/// The password form's fields, in the form's order; their rules are at the top of PasswordForm.swift.
public enum PasswordField: FormField {
    case current
    case new
    case confirm

    public init?(_ name: FieldName) {
        switch name {
        case .current: self = .current
        case .new: self = .new
        case .confirm: self = .confirm
        case .username, .password, .email, .query, .code: return nil
        }
    }

    public var name: FieldName {
        switch self {
        case .current: .current
        case .new: .new
        case .confirm: .confirm
        }
    }

    public var possibleCodes: [FieldCode] {
        switch self {
        case .current: [.empty, .entered]
        case .new: [.empty, .validating, .tooShort, .tooLong, .forbiddenCharacters, .sameAsCurrent, .valid, .checkFailed]
            + FieldCode.qualityCodes
        case .confirm: [.empty, .mismatch, .valid]
        }
    }
}
