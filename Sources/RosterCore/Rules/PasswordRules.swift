/// The register form's password and confirm rules (protocol.md "Register form"; the hardened preset's too).
public enum PasswordRules {
    /// Local rules on the normalized password; `.needsCheck` means they passed and libpwquality must decide.
    public static func validate(_ password: Secret, policy: Policy) -> RuleOutcome {
        let normalized = Normalization.normalizedPassword(password, nfkc: policy.passwordNFKC).exposed
        if normalized.isEmpty { return .settled(.empty) }
        let length = length(of: normalized, policy: policy)
        if length < policy.passwordMinLength { return .settled(.invalid(.tooShort)) }
        if length > policy.passwordMaxLength { return .settled(.invalid(.tooLong)) }
        if normalized.contains(where: { isForbidden($0, policy: policy) }) {
            return .settled(.invalid(.forbiddenCharacters))
        }
        return policy.passwordQualityCheck ? .needsCheck : .settled(.valid(.valid))
    }

    /// The confirm field against the password, both normalized, so that composed and decomposed input agree.
    public static func confirm(_ confirm: Secret, password: Secret, policy: Policy) -> FieldVerdict {
        if confirm.isEmpty { return .empty }
        return areSame(confirm, password, policy: policy) ? .valid(.valid) : .invalid(.mismatch)
    }

    /// Whether two passwords as typed are one password once normalized, as a hash of either would verify the other.
    public static func areSame(_ left: Secret, _ right: Secret, policy: Policy) -> Bool {
        let left = Normalization.normalizedPassword(left, nfkc: policy.passwordNFKC)
        let right = Normalization.normalizedPassword(right, nfkc: policy.passwordNFKC)
        // Swift's == already ignores canonical differences; comparing scalars keeps NFKC's folding the only one.
        return left.exposed.unicodeScalars.elementsEqual(right.exposed.unicodeScalars)
    }

    /// NIST SP 800-63B counts code points, the seeds count what a user sees as characters.
    static func length(of normalized: String, policy: Policy) -> Int {
        switch policy.preset {
        case .seed: normalized.count
        case .hardened: normalized.unicodeScalars.count
        }
    }

    /// Any printable text is allowed beyond the policy's list; control characters could never be typed back.
    private static func isForbidden(_ character: Character, policy: Policy) -> Bool {
        if policy.passwordForbiddenCharacters.contains(character) { return true }
        return character.unicodeScalars.contains { scalar in
            switch scalar.properties.generalCategory {
            case .control, .surrogate, .unassigned: true
            default: false
            }
        }
    }
}
