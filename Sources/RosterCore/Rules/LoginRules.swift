/// The log-in form's rules (contract §5): no password rules, and the username is checked for existence only
/// when the policy may reveal unknown users.
public enum LoginRules {
    /// `.needsCheck` asks the database whether the account exists.
    public static func username(_ raw: String, policy: Policy) -> RuleOutcome {
        if raw.isEmpty { return .settled(.empty) }
        return policy.revealUnknownUsers ? .needsCheck : .settled(.valid(.entered))
    }

    /// The verdict once the database has answered.
    public static func verdict(exists: Bool) -> FieldVerdict {
        exists ? .valid(.available) : .invalid(.notFound)
    }

    /// Any non-empty password may be tried; the store decides.
    public static func password(_ password: Secret) -> FieldVerdict {
        password.isEmpty ? .empty : .valid(.entered)
    }
}
