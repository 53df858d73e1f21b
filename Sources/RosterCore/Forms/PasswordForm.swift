// PasswordForm — a logged-in session's password change, sans I/O (protocol.md "Password form"; the seeds' view
// model again): its rules, and the rulebook that carries them out under `FormKernel`, whose file holds the
// theory of operation every form shares.
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
//   Submit sends `.changePassword(current:new:)`, both normalized; the store's answer reads as `succeeded`, or
//   `failed` keyed by the error's reason (wrong_password, invalid_credentials, rate_limited, busy, storage_full,
//   storage_unavailable; else failed). The form stays open after either: a failed submit can be corrected and
//   sent again. It asks the store nothing while typing, so neither a new account nor another daemon's writes
//   concern it.

/// The password form: `FormKernel`'s timing over the password-change rules.
public typealias PasswordForm = FormKernel<PasswordRulebook>

extension FormKernel where Rules == PasswordRulebook {
    /// `username` is the session's canonical username, which libpwquality refuses inside the new password.
    /// `debounce` is the session's (its `session.hello` timing), which may differ from `policy.debounce`.
    /// `firstToken` lets a runtime keep tokens unique across the forms of a session.
    public init(policy: Policy, username: String, debounce: Duration, firstToken: UInt64 = 1) {
        self.init(rules: PasswordRulebook(policy: policy, username: username), debounce: debounce,
                  firstToken: firstToken)
    }
}

/// The password form's rules over the field table (see the top of this file).
public struct PasswordRulebook: FormRulebook {
    public typealias Field = PasswordField
    public static let form = FormName.password
    /// A failure reads as the code keyed by its reason (`SubmitCode.failure`) only when it is one of these.
    public static let failureCodes: [SubmitCode] = [.notSubmittable, .wrongPassword, .invalidCredentials,
                                                    .rateLimited, .busy, .storageFull, .storageUnavailable]

    public var policy: Policy
    /// The session's canonical username.
    let username: String

    init(policy: Policy, username: String) {
        self.policy = policy
        self.username = username
    }

    public func evaluate(_ field: PasswordField, in table: Table) -> FieldEvaluation {
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

    public func isEnabled(_ field: PasswordField, in table: Table) -> Bool {
        switch field {
        case .current, .new: true
        case .confirm: table[.new].lastFinal.state == .valid
        }
    }

    public func isSubmittable(_ table: Table) -> Bool {
        table.order.allSatisfy { table[$0].settledState == .valid }
    }

    public func dependents(of field: PasswordField) -> [PasswordField] {
        switch field {
        case .current: [.new]
        case .new: [.confirm]
        case .confirm: []
        }
    }

    public func submitAction(_ table: Table) -> FormAction {
        .changePassword(current: Normalization.normalizedPassword(table[.current].committed, nfkc: policy.passwordNFKC),
                        new: Normalization.normalizedPassword(table[.new].committed, nfkc: policy.passwordNFKC))
    }

    public func outcome(_ identifier: String) -> SubmitOutcome { .passwordChanged }

    /// Passwords are never taken.
    public func takenKey(of field: PasswordField, _ value: String) -> String? { nil }

    /// Passwords are never taken, so a new account concerns no field.
    public func registeredKey(of field: PasswordField, username: String, email: String?) -> String? { nil }
}
