/// A debounce timer of one field; a form has at most one per field. It names the field by its wire name, so a
/// runner keys the timers of every form alike.
public enum FormTimer: Hashable, Sendable {
    case debounce(FieldName)
}

/// What a submit achieved; the runtime turns it into the `form.submit` answer (and logs the session in).
public enum SubmitOutcome: Equatable, Sendable {
    case registered(username: String)
    case loggedIn(username: String)
    /// The session's password was changed; the runtime answers how many other sessions it ended.
    case passwordChanged
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
    /// Store the account (canonical username, normalized password), then call `submitCompleted`.
    case register(username: String, password: Secret, email: String?)
    /// Verify the credentials (canonical username or email, normalized password, and the one-time code once the
    /// store asked for one), then call `submitCompleted`.
    case login(username: String, password: Secret, code: String?)
    /// Change the session's password (both normalized; `current` is verified only here, never per keystroke),
    /// then call `submitCompleted`.
    case changePassword(current: Secret, new: Secret)
    /// Answer every `form.submit` request of this form that is still waiting.
    case finishSubmit(Result<SubmitOutcome, RosterError>)
}
