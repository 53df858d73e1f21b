/// A debounce timer of one field; a form has at most one per field.
public enum FormTimer: Hashable, Sendable {
    case debounce(FieldName)
}

/// What a submit achieved; the runtime turns it into the `form.submit` answer (and logs the session in).
public enum SubmitOutcome: Equatable, Sendable {
    case registered(username: String)
    case loggedIn(username: String)
}

/// Something the runtime must do for a form. Actions come in order and are performed in order.
public enum FormAction: Equatable, Sendable {
    /// Arm the timer to fire at `at`, replacing that timer if it is already armed (the debounce moves).
    case schedule(FormTimer, at: Instant)
    case cancelTimer(FormTimer)
    case emit(FormEvent)
    /// Answer with `checkCompleted(token:result:now:)`, or drop it if cancelled first.
    case startCheck(Check, token: CheckToken)
    /// The answer is no longer wanted; the form ignores it anyway, so this only saves work.
    case cancelCheck(CheckToken)
    /// Store the account (canonical username, normalized password), then call `registrationCompleted`.
    case register(username: String, password: Secret, email: String?)
    /// Verify the credentials (canonical username or email, normalized password), then call `loginCompleted`.
    case login(username: String, password: Secret)
    /// Answer every `form.submit` request of this form that is still waiting.
    case finishSubmit(Result<SubmitOutcome, RosterError>)
}

/// One field as `form.open` answers it.
public struct FieldSnapshot: Equatable, Sendable {
    public var name: FieldName
    public var enabled: Bool
    public var state: FieldState
    public var code: FieldCode
    public var rev: Int

    public init(name: FieldName, enabled: Bool, state: FieldState, code: FieldCode, rev: Int) {
        self.name = name
        self.enabled = enabled
        self.state = state
        self.code = code
        self.rev = rev
    }
}

/// A form as `form.open` answers it: the same values its latest events told the client.
public struct FormSnapshot: Equatable, Sendable {
    public var form: FormName
    public var fields: [FieldSnapshot]
    public var submittable: Bool

    public init(form: FormName, fields: [FieldSnapshot], submittable: Bool) {
        self.form = form
        self.fields = fields
        self.submittable = submittable
    }
}
