/// The register rules per field, written once: the register form's rulebook judges its fields by them, and
/// `users.register` judges its params by them (see `Registration`), so the two can never disagree.
public enum RegisterRules {
    /// The username as typed: a verdict by the local rules, or the availability check that decides.
    @inlinable
    public static func username(_ raw: String, policy: Policy) -> FieldEvaluation {
        // `UsernameRules.validate(raw)`, with the canonical form computed once: it is judged and looked up both,
        // and it is a good part of a check_username's cost (as profiled). Inlinable, so that the plain
        // fast lane pays for no enum in between.
        if UsernameRules.isTooLongToNormalize(raw, policy: policy) { return .settled(.invalid(.tooLong)) }
        let canonical = Normalization.canonicalUsername(raw)
        switch UsernameRules.validate(canonical: canonical, policy: policy) {
        case .settled(let verdict): return .settled(verdict)
        case .needsCheck: return .check(.usernameAvailable(canonical: canonical))
        }
    }

    /// The password as typed, beside the username as typed (libpwquality refuses a password that holds it).
    public static func password(_ raw: Secret, username: String, policy: Policy) -> FieldEvaluation {
        switch PasswordRules.validate(raw, policy: policy) {
        case .settled(let verdict): .settled(verdict)
        case .needsCheck:
            .check(.passwordQuality(password: Normalization.normalizedPassword(raw, nfkc: policy.passwordNFKC),
                                    username: Normalization.canonicalUsername(username)))
        }
    }

    /// The email as typed; empty is fine, as it is optional.
    public static func email(_ raw: String) -> FieldEvaluation {
        switch EmailRules.validate(raw) {
        case .settled(let verdict): .settled(verdict)
        case .needsCheck: .check(.emailAvailable(canonical: Normalization.canonicalEmail(raw)))
        }
    }
}

/// What a registration stores of the fields as typed: the canonical username, the normalized password (to
/// hash) and the canonical email, nil when none was given.
public struct RegistrationRequest: Equatable, Sendable {
    public let username: String
    public let password: Secret
    public let email: String?

    public init(typedUsername username: String, password: Secret, email: String, policy: Policy) {
        self.username = Normalization.canonicalUsername(username)
        self.password = Normalization.normalizedPassword(password, nfkc: policy.passwordNFKC)
        self.email = email.isEmpty ? nil : Normalization.canonicalEmail(email)
    }

    /// Values already in canonical form (the register form's `.register` action).
    public init(username: String, password: Secret, email: String?) {
        self.username = username
        self.password = password
        self.email = email
    }
}
