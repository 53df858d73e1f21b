/// The rules of a password change, written once: the password form's rulebook judges its `new` field by them, and
/// `account.change_password` judges its params by them, so the two can never disagree.
public enum PasswordChangeRules {
    /// The new password as typed: the preset's password rules (as at registration, libpwquality too when the
    /// preset checks quality, against the account's `username`), then `same_as_current` against `current` as
    /// typed. Sameness is judged once the local rules pass and before the quality check: a too-short password
    /// says so whatever it equals, and a password that is the current one needs no libpwquality to be refused.
    public static func newPassword(_ raw: Secret, current: Secret, username: String, policy: Policy) -> FieldEvaluation {
        let evaluation = RegisterRules.password(raw, username: username, policy: policy)
        switch evaluation {
        case .settled(let verdict) where verdict.state != .valid:
            return evaluation
        case .settled, .check:
            return PasswordRules.areSame(raw, current, policy: policy) ? .settled(.invalid(.sameAsCurrent)) : evaluation
        }
    }
}
