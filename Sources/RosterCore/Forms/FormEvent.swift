/// What a form tells its client; the runtime adds `message` by localizing `messageKey` (FormEventText.swift).
public enum FormEvent: Equatable, Sendable {
    case field(form: FormName, field: FieldName, state: FieldState, code: FieldCode, enabled: Bool, rev: Int)
    case form(form: FormName, submittable: Bool)
    case submit(form: FormName, state: SubmitState, code: SubmitCode)

    /// The catalog key of the event's message; `form` events carry none.
    public var messageKey: String? {
        switch self {
        case .field(_, let field, _, let code, _, _): "\(field.rawValue).\(code.rawValue)"
        case .form: nil
        case .submit(let form, _, let code): "\(form.rawValue).\(code.rawValue)"
        }
    }
}

/// The phase of a `form.submit` (protocol.md "Events", `submit`).
public enum SubmitState: String, CaseIterable, Sendable {
    case running
    case succeeded
    case failed
}
