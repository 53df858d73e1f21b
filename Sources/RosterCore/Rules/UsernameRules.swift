/// The register form's username rules (contract §5), judged on the canonical form so that full-width
/// look-alikes of forbidden characters are caught too.
public enum UsernameRules {
    /// Local rules only; `.needsCheck` means the name is well-formed and only the database can say `taken`.
    public static func validate(_ raw: String, policy: Policy) -> RuleOutcome {
        let canonical = Normalization.canonicalUsername(raw)
        if canonical.isEmpty { return .settled(.empty) }
        if canonical.count < policy.usernameMinLength { return .settled(.invalid(.tooShort)) }
        if canonical.count > policy.usernameMaxLength { return .settled(.invalid(.tooLong)) }
        if canonical.contains(where: { isForbidden($0, policy: policy) }) {
            return .settled(.invalid(.forbiddenCharacters))
        }
        return .needsCheck
    }

    /// The verdict once the database has answered.
    public static func verdict(taken: Bool) -> FieldVerdict {
        taken ? .invalid(.taken) : .valid(.available)
    }

    private static func isForbidden(_ character: Character, policy: Policy) -> Bool {
        if policy.usernameForbiddenCharacters.contains(character) || character.isWhitespace { return true }
        return character.unicodeScalars.contains { scalar in
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .spaceSeparator,
                 .surrogate, .privateUse, .unassigned:
                true
            default:
                false
            }
        }
    }
}
