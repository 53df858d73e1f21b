/// The register form's username rules (contract §5), judged on the canonical form so that full-width
/// look-alikes of forbidden characters are caught too.
public enum UsernameRules {
    /// Local rules only; `.needsCheck` means the name is well-formed and only the database can say `taken`.
    public static func validate(_ raw: String, policy: Policy) -> RuleOutcome {
        validate(canonical: Normalization.canonicalUsername(raw), policy: policy)
    }

    /// The same rules for a name already through `Normalization.canonicalUsername`, so a caller that needs the
    /// canonical form anyway (to look it up) computes it once.
    public static func validate(canonical: String, policy: Policy) -> RuleOutcome {
        if canonical.isEmpty { return .settled(.empty) }
        if let verdict = validateASCII(canonical, policy: policy) { return verdict }
        if canonical.count < policy.usernameMinLength { return .settled(.invalid(.tooShort)) }
        if canonical.count > policy.usernameMaxLength { return .settled(.invalid(.tooLong)) }
        if canonical.contains(where: { isForbidden($0, policy: policy) }) {
            return .settled(.invalid(.forbiddenCharacters))
        }
        return .needsCheck
    }

    /// The rules above for a name of printable ASCII, byte by byte (nil for anything else, which takes the
    /// general path). There a character is one byte (no "\r\n" pair to count as one), and the only
    /// whitespace or control character is the space.
    private static func validateASCII(_ canonical: String, policy: Policy) -> RuleOutcome? {
        let outcome = canonical.utf8.withContiguousStorageIfAvailable { bytes -> RuleOutcome? in
            guard !bytes.contains(where: { $0 < 0x20 || $0 >= 0x7F }) else { return nil }
            if bytes.count < policy.usernameMinLength { return .settled(.invalid(.tooShort)) }
            if bytes.count > policy.usernameMaxLength { return .settled(.invalid(.tooLong)) }
            let forbidden = policy.usernameForbiddenCharacters
            for byte in bytes where byte == 0x20 || forbidden.contains(asciiByte: byte) {
                return .settled(.invalid(.forbiddenCharacters))
            }
            return .needsCheck
        }
        return outcome ?? nil
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
