// LoginForm — the log-in form's view model, sans I/O (contract §5 and §6, seed 000).
//
// RULES
//   Fields, in order (`LoginField`): username (a username or an email), password, code. The first two are
//   always enabled.
//   username  empty → empty. When the policy reveals unknown users (seed): the store decides —
//             exists → valid/available “用户名可用”, unknown → invalid/not_found “用户名不存在”.
//             When it does not (hardened): no store check, so nothing leaks — any text → valid/entered.
//             Looked up canonically: an `@` means an email (lower-cased, NFC), else PRECIS UsernameCaseMapped.
//   password  no rules at log-in: empty → empty, else valid/entered. Sent normalized as at registration.
//   code      the one-time (TOTP) code; disabled (seed 000's chain) until a submit answered code_required,
//             then enabled for as long as username and password hold the values that submit sent: the store
//             said those are right, and the code goes with them. Editing either disables it again (a different
//             account or password may need no code). empty → empty · six digits, spaces dropped → valid/valid ·
//             else invalid/not_six_digits. Sent as its six ASCII digits.
//   submittable = username and password non-empty, each judged for its latest input (so a `not_found`
//             username is still submittable, as the contract says; the submit then fails with not_found), and
//             the code valid while it is enabled.
//
// THEORY OF OPERATION
//   The same machine as RegisterForm (see the top of RegisterForm.swift): per-field debounce,
//   distinctUntilChanged, flatMapLatest by token, diff-based emission, submit that flushes pending debounces
//   and waits for outstanding checks, joined second submits. Submit sends `.login(...)`; the store's answer
//   comes back through `loginCompleted`: `succeeded`, or `failed` with wrong_password, not_found,
//   invalid_credentials, rate_limited, busy, code_required, invalid_code or locked, keyed by the error's reason (else
//   failed; `SubmitCode.failure`), then `.finishSubmit`. A `code_required` also enables `code` (above); an
//   `invalid_code` leaves it enabled, for the next code.

/// The log-in form's view model: facts in (input, timers, check answers, submit), actions out.
public struct LoginForm: Sendable {
    public typealias Field = LoginField
    public static let form = FormName.login

    /// Every submit code this form can send; each has a message in every locale.
    public static let possibleSubmitCodes: [SubmitCode] = [.running, .succeeded, .failed]
        + LoginRulebook.failureCodes

    private var kernel: FormKernel<LoginRulebook>

    /// `debounce` is the session's (contract §4 hello timing), which may differ from `policy.debounce`.
    /// `firstToken` lets a runtime keep tokens unique across the forms of a session.
    public init(policy: Policy, debounce: Duration, firstToken: UInt64 = 1) {
        kernel = FormKernel(rules: LoginRulebook(policy: policy), debounce: debounce, firstToken: firstToken)
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

    /// Throws `unknownField` for a field this form lacks (not a `LoginField`).
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

    /// The store's answer to `.login`: the canonical username of the account, or why it failed.
    public mutating func loginCompleted(_ result: Result<String, RosterError>) -> [FormAction] {
        kernel.submitCompleted(result)
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

/// The log-in form's rules over the field table (see the top of this file).
struct LoginRulebook: FormRulebook {
    typealias Field = LoginField
    static let form = FormName.login
    /// A failure reads as the code keyed by its reason (`SubmitCode.failure`) only when it is one of these.
    static let failureCodes: [SubmitCode] = [.notSubmittable, .notFound, .wrongPassword, .invalidCredentials,
                                             .rateLimited, .busy, .storageUnavailable, .codeRequired, .invalidCode,
                                             .locked]

    var policy: Policy
    /// The username and password a submit sent when the store answered `code_required`; nil before.
    private var codeAskedFor: (username: Secret, password: Secret)?

    init(policy: Policy) { self.policy = policy }

    func evaluate(_ field: LoginField, in table: Table) -> FieldEvaluation {
        let value = table[field].committed
        switch field {
        case .username:
            switch LoginRules.username(value.exposed, policy: policy) {
            case .settled(let verdict): return .settled(verdict)
            case .needsCheck:
                return .check(.accountExists(canonical: Normalization.canonicalLoginIdentifier(value.exposed)))
            }
        case .password:
            return .settled(LoginRules.password(value))
        case .code:
            return .settled(LoginRules.code(value))
        }
    }

    func isEnabled(_ field: LoginField, in table: Table) -> Bool {
        switch field {
        case .username, .password: true
        case .code:
            codeAskedFor.map { $0.username == table[.username].committed && $0.password == table[.password].committed }
                ?? false
        }
    }

    func isSubmittable(_ table: Table) -> Bool {
        let username = table[.username].settledState
        return username != nil && username != .empty && table[.password].settledState == .valid
            && (!isEnabled(.code, in: table) || table[.code].settledState == .valid)
    }

    func dependents(of field: LoginField) -> [LoginField] { [] }

    func submitAction(_ table: Table) -> FormAction {
        let code = isEnabled(.code, in: table) ? LoginRules.normalizedCode(table[.code].committed) : nil
        let request = LogInRequest(typedIdentifier: table[.username].committed.exposed,
                                   password: table[.password].committed, policy: policy, code: code)
        return .login(username: request.identifier, password: request.password, code: request.code)
    }

    mutating func submitFailed(_ error: RosterError, submitted: [LoginField: Secret]) {
        guard error == .codeRequired, let username = submitted[.username], let password = submitted[.password] else {
            return
        }
        codeAskedFor = (username, password)
    }

    func outcome(_ identifier: String) -> SubmitOutcome { .loggedIn(username: identifier) }

    /// Log-in never marks a field from the store's answer: that would leak what the policy may hide.
    func takenKey(of field: LoginField, _ value: String) -> String? { nil }
}
