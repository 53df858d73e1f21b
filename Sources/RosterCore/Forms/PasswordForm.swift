// PasswordForm — a logged-in session's password change, sans I/O (contract §8): the seeds' view model again.
//
// RULES
//   Fields, in order (`PasswordField`): current, new, confirm.
//   current   always enabled. empty → empty, else valid/entered: it is verified only on submit (through the
//             failed-log-in limiter), never per keystroke, so typing tells nothing about it.
//   new       always enabled. The preset's password rules exactly as the register form's password (normalized;
//             too_short · too_long · forbidden_characters; libpwquality when the preset checks quality, with the
//             session's username for contains_username), plus same_as_current: equal to `current` once both
//             are normalized (see `PasswordChangeRules`). Judged again whenever current's debounced value
//             changes (combineLatest), a quality check still out for it too.
//   confirm   enabled only while new's latest final verdict is valid. empty · mismatch · valid, as at
//             registration. Judged again whenever new's debounced value changes.
//   submittable = all three valid, each for its latest input.
//
// THEORY OF OPERATION
//   The register form's machine (see the top of RegisterForm.swift): per-field debounce, distinctUntilChanged,
//   flatMapLatest by token, diff-based emission, a submit that flushes pending debounces and waits for
//   outstanding checks, joined second submits. Submit sends `.changePassword(current:new:)`, both normalized;
//   the store's answer comes back through `passwordChangeCompleted`: `succeeded`, or `failed` keyed by the
//   error's reason (wrong_password, invalid_credentials, rate_limited, busy, storage_full,
//   storage_unavailable; else failed), then `.finishSubmit`. The form stays open after either: a failed
//   submit can be corrected and sent again.

/// The password form's view model: facts in (input, timers, check answers, submit), actions out.
public struct PasswordForm: Sendable {
    public typealias Field = PasswordField
    public static let form = FormName.password

    /// Every submit code this form can send; each has a message in every locale.
    public static let possibleSubmitCodes: [SubmitCode] = [.running, .succeeded, .failed]
        + PasswordRulebook.failureCodes

    private var kernel: FormKernel<PasswordRulebook>

    /// `username` is the session's canonical username, which libpwquality refuses inside the new password.
    /// `debounce` is the session's (contract §4 hello timing), which may differ from `policy.debounce`.
    /// `firstToken` lets a runtime keep tokens unique across the forms of a session.
    public init(policy: Policy, username: String, debounce: Duration, firstToken: UInt64 = 1) {
        kernel = FormKernel(rules: PasswordRulebook(policy: policy, username: username), debounce: debounce,
                            firstToken: firstToken)
    }

    public var policy: Policy { kernel.rules.policy }
    /// Applies from the next input on.
    public var debounce: Duration {
        get { kernel.debounce }
        set { kernel.debounce = newValue }
    }
    /// The `form.open` answer.
    public var snapshot: FormSnapshot { kernel.snapshot }
    public var isSubmitting: Bool { kernel.isSubmitting }

    /// Throws `unknownField` for a field this form lacks (not a `PasswordField`) and `fieldDisabled` for a
    /// disabled one.
    public mutating func inputReceived(field: FieldName, value: String, now: Instant) throws(RosterError)
        -> (rev: Int, actions: [FormAction]) {
        try kernel.input(field, value, now: now)
    }

    public mutating func timerFired(_ timer: FormTimer, now: Instant) -> [FormAction] {
        kernel.timerFired(timer, now: now)
    }

    // `now` is unused today; every fact carries the loop's time so that a timed rule needs no new API.
    public mutating func checkCompleted(token: CheckToken, result: CheckResult, now: Instant) -> [FormAction] {
        kernel.checkCompleted(token: token, result: result)
    }

    public mutating func submitRequested(now: Instant) -> [FormAction] {
        kernel.submitRequested()
    }

    /// The store's answer to `.changePassword`: the account's canonical username, or why it failed.
    public mutating func passwordChangeCompleted(_ result: Result<String, RosterError>) -> [FormAction] {
        kernel.submitCompleted(result)
    }

    /// New rules judge new input; verdicts already given stand.
    public mutating func policyChanged(_ policy: Policy) {
        kernel.rules.policy = policy
    }

    /// Cancels every timer and check; the form is then discarded (reopening makes a new one).
    public mutating func close() -> [FormAction] {
        kernel.close()
    }
}

/// The password form's rules over the field table (see the top of this file).
struct PasswordRulebook: FormRulebook {
    typealias Field = PasswordField
    static let form = FormName.password
    /// A failure reads as the code keyed by its reason (`SubmitCode.failure`) only when it is one of these.
    static let failureCodes: [SubmitCode] = [.notSubmittable, .wrongPassword, .invalidCredentials, .rateLimited, .busy,
                                             .storageFull, .storageUnavailable]

    var policy: Policy
    /// The session's canonical username.
    let username: String

    func evaluate(_ field: PasswordField, in table: Table) -> FieldEvaluation {
        let value = table[field].committed
        switch field {
        case .current:
            return .settled(LoginRules.password(value))
        case .new:
            return PasswordChangeRules.newPassword(value, current: table[.current].committed, username: username,
                                                   policy: policy)
        case .confirm:
            return .settled(PasswordRules.confirm(value, password: table[.new].committed, policy: policy))
        }
    }

    func isEnabled(_ field: PasswordField, in table: Table) -> Bool {
        switch field {
        case .current, .new: true
        case .confirm: table[.new].lastFinal.state == .valid
        }
    }

    func isSubmittable(_ table: Table) -> Bool {
        table.order.allSatisfy { table[$0].settledState == .valid }
    }

    func dependents(of field: PasswordField) -> [PasswordField] {
        switch field {
        case .current: [.new]
        case .new: [.confirm]
        case .confirm: []
        }
    }

    func submitAction(_ table: Table) -> FormAction {
        .changePassword(current: Normalization.normalizedPassword(table[.current].committed, nfkc: policy.passwordNFKC),
                        new: Normalization.normalizedPassword(table[.new].committed, nfkc: policy.passwordNFKC))
    }

    func outcome(_ identifier: String) -> SubmitOutcome { .passwordChanged }

    /// Passwords are never taken.
    func takenKey(of field: PasswordField, _ value: String) -> String? { nil }
}
