// RegisterForm — the register form's view model, sans I/O (contract §5, seeds 000 and 001).
//
// RULES
//   Fields, in order (`RegisterField`): username, password, confirm, email.
//   username  empty → empty · longer than the max (code points) → too_long · shorter than UsernameMinLength →
//             too_short · any forbidden character, whitespace or control character → forbidden_characters ·
//             outside PRECIS IdentifierClass → disallowed_character · against the Bidi Rule → bidi_rule ·
//             more than one script → mixed_script (see UsernameRules) ·
//             else the store decides: taken → invalid/taken, free → valid/available.
//             Judged on the PRECIS UsernameCaseMapped form, so "ＡＬＩＣＥ１２" is "alice12".
//   password  enabled only while username's latest final verdict is valid. Normalized (OpaqueString; NFKC
//             when hardened); too_short · too_long (characters; Unicode scalars when hardened) ·
//             forbidden_characters · else valid — or, when PasswordQualityCheck is on, libpwquality decides
//             (valid/valid, or invalid with weak/dictionary_word/contains_username/too_simple).
//   confirm   enabled only while password is enabled and valid. empty · mismatch · valid. Judged again
//             whenever the password's debounced value changes (combineLatest).
//   email     optional, always enabled. empty (fine) · too_long (over 254) · invalid_email (the seeds'
//             pattern, whole string) · else the store decides: taken, or valid/valid.
//   submittable = username, password and confirm valid, and email valid or empty — each for its latest input.
//
// THEORY OF OPERATION
//   Every field is a little pipeline: input → debounce → rules → (check) → verdict. The seeds' operators are
//   properties of it:
//   • distinctUntilChanged: an input equal to the field's previous input is accepted silently, same rev.
//   • debounce: each accepted input bumps the rev and (re)schedules the field's timer at now + debounce;
//     the runtime replaces an armed timer, and a fire before the deadline is ignored anyway.
//   • rules: when the timer fires, local rules give a verdict at once, or a check is started with a fresh
//     token and the field shows `validating` (seed 001's 校验中…). Quality checks show it too: the wait is
//     real, and a field must have something current to show when its enablement flips.
//   • flatMapLatest: a newer input cancels the outstanding token; an answer for any token the form is not
//     waiting for is dropped with no action.
//   • combineLatest: enablement and submittable are pure functions of the fields' verdicts. Enablement follows
//     the latest *final* verdict (a neighbour being re-checked does not disable you); submittable counts only
//     verdicts for the current input, so an unchecked input is never submittable.
//   After every fact the machine compares what each field would show — (state, code, enabled, rev) — with
//   what it last told the client and emits only differences, never for an older rev; `form` goes out only
//   when submittable flips. A field still debouncing has nothing current to show, so if its enablement
//   flips it is judged at once (timer cancelled) and the flip goes out with its current rev.
//
//   Submit: `running`, then every pending debounce is flushed (timer cancelled, rules run now). While checks
//   are out the submit waits, and input that arrives meanwhile is judged at once (no debounce), because the
//   submit is for the latest input. When nothing is pending: submittable → `.register(...)`; else `failed`
//   not_submittable and `.finishSubmit(.failure(.notSubmittable))`. The store's answer comes back through
//   `registrationCompleted`: `succeeded` or `failed` (`SubmitCode.failure`) and `.finishSubmit`. A `taken` from
//   the store also marks that field taken. A submit while one runs joins it: no actions, and the runtime
//   answers every waiting request with the one `.finishSubmit`.
//
//   Live taken: `usernameRegistered` / `emailRegistered` turn a field that holds that value (valid, or being
//   checked) into invalid/taken, which disables what depends on it and drops submittable. The form's own
//   successful registration is exempt.

/// The register form's view model: facts in (input, timers, check answers, submit), actions out.
public struct RegisterForm: Sendable {
    public typealias Field = RegisterField
    public static let form = FormName.register

    /// Every submit code this form can send; each has a message in every locale.
    public static let possibleSubmitCodes: [SubmitCode] = [.running, .succeeded, .failed]
        + RegisterRulebook.failureCodes

    private var kernel: FormKernel<RegisterRulebook>

    /// `debounce` is the session's (contract §4 hello timing), which may differ from `policy.debounce`.
    /// `firstToken` lets a runtime keep tokens unique across the forms of a session.
    public init(policy: Policy, debounce: Duration, firstToken: UInt64 = 1) {
        kernel = FormKernel(rules: RegisterRulebook(policy: policy), debounce: debounce, firstToken: firstToken)
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

    /// Throws `unknownField` for a field this form lacks (not a `RegisterField`) and `fieldDisabled` for a
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

    /// The store's answer to `.register`: the canonical username, or why it failed.
    public mutating func registrationCompleted(_ result: Result<String, RosterError>) -> [FormAction] {
        kernel.submitCompleted(result)
    }

    /// Someone (any session) registered this canonical username.
    public mutating func usernameRegistered(canonical: String) -> [FormAction] {
        kernel.registered(.username, canonical: canonical)
    }

    /// Someone (any session) registered this canonical email.
    public mutating func emailRegistered(canonical: String) -> [FormAction] {
        kernel.registered(.email, canonical: canonical)
    }

    /// Another daemon's writes may have changed what the store answered: the fields they concern ask again.
    public mutating func storeChanged(_ change: StoreChange) -> [FormAction] {
        kernel.storeChanged(change)
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

/// The register form's rules over the field table (see the top of this file).
struct RegisterRulebook: FormRulebook {
    typealias Field = RegisterField
    static let form = FormName.register
    /// A failure reads as the code keyed by its reason (`SubmitCode.failure`) only when it is one of these.
    static let failureCodes: [SubmitCode] = [.notSubmittable, .taken, .busy, .storageFull, .storageUnavailable]

    var policy: Policy

    func evaluate(_ field: RegisterField, in table: Table) -> FieldEvaluation {
        let value = table[field].committed
        switch field {
        case .username:
            return RegisterRules.username(value.exposed, policy: policy)
        case .password:
            return RegisterRules.password(value, username: table[.username].committed.exposed, policy: policy)
        case .confirm:
            return .settled(PasswordRules.confirm(value, password: table[.password].committed, policy: policy))
        case .email:
            return RegisterRules.email(value.exposed)
        }
    }

    func isEnabled(_ field: RegisterField, in table: Table) -> Bool {
        switch field {
        case .username, .email: true
        case .password: table[.username].lastFinal.state == .valid
        case .confirm: isEnabled(.password, in: table) && table[.password].lastFinal.state == .valid
        }
    }

    func isSubmittable(_ table: Table) -> Bool {
        table[.username].settledState == .valid && table[.password].settledState == .valid
            && table[.confirm].settledState == .valid
            && (table[.email].settledState == .valid || table[.email].settledState == .empty)
    }

    func dependents(of field: RegisterField) -> [RegisterField] {
        switch field {
        case .password: [.confirm]
        case .username, .confirm, .email: []
        }
    }

    func submitAction(_ table: Table) -> FormAction {
        let request = RegistrationRequest(typedUsername: table[.username].committed.exposed,
                                          password: table[.password].committed,
                                          email: table[.email].committed.exposed, policy: policy)
        return .register(username: request.username, password: request.password, email: request.email)
    }

    func outcome(_ identifier: String) -> SubmitOutcome { .registered(username: identifier) }

    /// Usernames and emails are unique in the store, by their canonical forms; passwords are never taken.
    func takenKey(of field: RegisterField, _ value: String) -> String? {
        switch field {
        case .username: Normalization.canonicalUsername(value)
        case .email: Normalization.canonicalEmail(value)
        case .password, .confirm: nil
        }
    }
}
