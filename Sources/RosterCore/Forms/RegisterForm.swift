// RegisterForm — the register form, sans I/O (protocol.md "Register form"; seeds 000 and 001): its rules, and
// the rulebook that carries them out under `FormKernel`, whose file holds the theory of operation every form
// shares.
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
//   Submit sends `.register(username:password:email:)`; the store's `taken` marks the field it names.
//   Live taken: an account registered by any session (`accountRegistered`) turns a username or email field
//   holding its canonical username or email `taken`.

/// The register form: `FormKernel`'s timing over the register rules.
public typealias RegisterForm = FormKernel<RegisterRulebook>

extension FormKernel where Rules == RegisterRulebook {
    /// `debounce` is the session's (its `session.hello` timing), which may differ from `policy.debounce`.
    /// `firstToken` lets a runtime keep tokens unique across the forms of a session.
    public init(policy: Policy, debounce: Duration, firstToken: UInt64 = 1) {
        self.init(rules: RegisterRulebook(policy: policy), debounce: debounce, firstToken: firstToken)
    }

    /// Someone (any session) registered this canonical username.
    public mutating func usernameRegistered(canonical: String) -> [FormAction] {
        registered(.username, canonical: canonical)
    }

    /// Someone (any session) registered this canonical email.
    public mutating func emailRegistered(canonical: String) -> [FormAction] {
        registered(.email, canonical: canonical)
    }
}

/// The register form's rules over the field table (see the top of this file).
public struct RegisterRulebook: FormRulebook {
    public typealias Field = RegisterField
    public static let form = FormName.register
    /// A failure reads as the code keyed by its reason (`SubmitCode.failure`) only when it is one of these.
    public static let failureCodes: [SubmitCode] = [.notSubmittable, .taken, .busy, .storageFull, .storageUnavailable]

    public var policy: Policy

    init(policy: Policy) { self.policy = policy }

    public func evaluate(_ field: RegisterField, in table: Table) -> FieldEvaluation {
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

    public func isEnabled(_ field: RegisterField, in table: Table) -> Bool {
        switch field {
        case .username, .email: true
        case .password: table[.username].lastFinal.state == .valid
        case .confirm: isEnabled(.password, in: table) && table[.password].lastFinal.state == .valid
        }
    }

    public func isSubmittable(_ table: Table) -> Bool {
        table[.username].settledState == .valid && table[.password].settledState == .valid
            && table[.confirm].settledState == .valid
            && (table[.email].settledState == .valid || table[.email].settledState == .empty)
    }

    public func dependents(of field: RegisterField) -> [RegisterField] {
        switch field {
        case .password: [.confirm]
        case .username, .confirm, .email: []
        }
    }

    public func submitAction(_ table: Table) -> FormAction {
        let request = RegistrationRequest(typedUsername: table[.username].committed.exposed,
                                          password: table[.password].committed,
                                          email: table[.email].committed.exposed, policy: policy)
        return .register(username: request.username, password: request.password, email: request.email)
    }

    public func outcome(_ identifier: String) -> SubmitOutcome { .registered(username: identifier) }

    /// Usernames and emails are unique in the store, by their canonical forms; passwords are never taken.
    public func takenKey(of field: RegisterField, _ value: String) -> String? {
        switch field {
        case .username: Normalization.canonicalUsername(value)
        case .email: Normalization.canonicalEmail(value)
        case .password, .confirm: nil
        }
    }

    /// A new account holds its canonical username and email, which a username or email field may hold too.
    public func registeredKey(of field: RegisterField, username: String, email: String?) -> String? {
        switch field {
        case .username: username
        case .email: email
        case .password, .confirm: nil
        }
    }
}
