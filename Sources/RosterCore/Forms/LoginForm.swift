// LoginForm — the log-in form, sans I/O (protocol.md "Log-in form"; seed 000): its rules, and the rulebook that
// carries them out under `FormKernel`, whose file holds the theory of operation every form shares.
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
//             username is still submittable; the submit then fails with not_found), and the code valid
//             while it is enabled.
//
//   Submit sends `.login(username:password:code:)`; the store's answer reads as `succeeded`, or `failed` with
//   wrong_password, not_found, invalid_credentials, rate_limited, busy, code_required, invalid_code or locked,
//   keyed by the error's reason (else failed; `SubmitCode.failure`). A `code_required` also enables `code`
//   (above); an `invalid_code` leaves it enabled, for the next code. A new account changes nothing a log-in form
//   showed: it already says what it knew when it checked.

/// The log-in form: `FormKernel`'s timing over the log-in rules.
public typealias LoginForm = FormKernel<LoginRulebook>

extension FormKernel where Rules == LoginRulebook {
    /// `debounce` is the session's (its `session.hello` timing), which may differ from `policy.debounce`.
    /// `firstToken` lets a runtime keep tokens unique across the forms of a session.
    public init(policy: Policy, debounce: Duration, firstToken: UInt64 = 1) {
        self.init(rules: LoginRulebook(policy: policy), debounce: debounce, firstToken: firstToken)
    }
}

/// The log-in form's rules over the field table (see the top of this file).
public struct LoginRulebook: FormRulebook {
    public typealias Field = LoginField
    public static let form = FormName.login
    /// A failure reads as the code keyed by its reason (`SubmitCode.failure`) only when it is one of these.
    public static let failureCodes: [SubmitCode] = [.notSubmittable, .notFound, .wrongPassword,
                                                    .invalidCredentials, .rateLimited, .busy, .storageUnavailable,
                                                    .codeRequired, .invalidCode, .locked]

    public var policy: Policy
    /// The username and password a submit sent when the store answered `code_required`; nil before.
    private var codeAskedFor: (username: Secret, password: Secret)?

    init(policy: Policy) { self.policy = policy }

    public func evaluate(_ field: LoginField, in table: Table) -> FieldEvaluation {
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

    public func isEnabled(_ field: LoginField, in table: Table) -> Bool {
        switch field {
        case .username, .password: true
        case .code:
            codeAskedFor.map { $0.username == table[.username].committed && $0.password == table[.password].committed }
                ?? false
        }
    }

    public func isSubmittable(_ table: Table) -> Bool {
        let username = table[.username].settledState
        return username != nil && username != .empty && table[.password].settledState == .valid
            && (!isEnabled(.code, in: table) || table[.code].settledState == .valid)
    }

    public func dependents(of field: LoginField) -> [LoginField] { [] }

    public func submitAction(_ table: Table) -> FormAction {
        let code = isEnabled(.code, in: table) ? LoginRules.normalizedCode(table[.code].committed) : nil
        let request = LogInRequest(typedIdentifier: table[.username].committed.exposed,
                                   password: table[.password].committed, policy: policy, code: code)
        return .login(username: request.identifier, password: request.password, code: request.code)
    }

    public mutating func submitFailed(_ error: RosterError, submitted: [LoginField: Secret]) {
        guard error == .codeRequired, let username = submitted[.username], let password = submitted[.password] else {
            return
        }
        codeAskedFor = (username, password)
    }

    public func outcome(_ identifier: String) -> SubmitOutcome { .loggedIn(username: identifier) }

    /// Log-in never marks a field from the store's answer: that would leak what the policy may hide.
    public func takenKey(of field: LoginField, _ value: String) -> String? { nil }

    /// A log-in form already shows what it knew when it checked; a new account changes nothing it promised.
    public func registeredKey(of field: LoginField, username: String, email: String?) -> String? { nil }
}
