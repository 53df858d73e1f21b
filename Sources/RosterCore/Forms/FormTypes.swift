/// The forms a session can open (contract §4 `form.open`).
public enum FormName: String, CaseIterable, Sendable {
    case register
    case login
    case contacts
}

/// Every field of every form; which ones a form has is the form's own business.
public enum FieldName: String, CaseIterable, Sendable {
    case username
    case password
    case confirm
    case email
    case query
}

/// A field's state as a client shows it (contract §3).
public enum FieldState: String, CaseIterable, Sendable {
    case empty
    case validating
    case valid
    case invalid
}

/// The phase of a `form.submit` (contract §3 `submit` events).
public enum SubmitState: String, CaseIterable, Sendable {
    case running
    case succeeded
    case failed
}

/// Why a submit event reads as it does; the raw value is the wire `code` and the suffix of `<form>.<code>`.
public enum SubmitCode: String, CaseIterable, Sendable {
    case running
    case succeeded
    /// Any failure without a more telling code of its own.
    case failed
    case notSubmittable = "not_submittable"
    case taken
    case notFound = "not_found"
    case wrongPassword = "wrong_password"
    case invalidCredentials = "invalid_credentials"
    case rateLimited = "rate_limited"
    case busy
    case storageFull = "storage_full"
}

/// What a form tells its client; the runtime adds `message` by localizing `messageKey`.
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
