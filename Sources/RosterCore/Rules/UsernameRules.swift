/// The register form's username rules (protocol.md "Register form"), judged on the canonical form so that full-width
/// look-alikes of forbidden characters are caught too.
///
/// In order: empty · longer than the maximum in code points → too_long · shorter than the minimum in
/// characters (graphemes) → too_short · the policy's forbidden characters, whitespace and controls →
/// forbidden_characters · a code point PRECIS IdentifierClass refuses → disallowed_character · the Bidi Rule
/// → bidi_rule · more than one script (UTS #39 Highly Restrictive) → mixed_script. These gate registration
/// only: a stored name is looked up as it is, whatever the rules say of it now.
public enum UsernameRules {
    /// Local rules only; `.needsCheck` means the name is well-formed and only the database can say `taken`.
    public static func validate(_ raw: String, policy: Policy) -> RuleOutcome {
        if isTooLongToNormalize(raw, policy: policy) { return .settled(.invalid(.tooLong)) }
        return validate(canonical: Normalization.canonicalUsername(raw), policy: policy)
    }

    /// Whether `raw` has more UTF-8 bytes than any name within the maximum could have before normalization,
    /// so that it is refused without paying for its normalization. Each code point has at most 4 bytes, NFC
    /// composes at most `longestCanonicalDecomposition` code points into one, and lower-casing and width
    /// mapping never lower the count of code points.
    public static func isTooLongToNormalize(_ raw: String, policy: Policy) -> Bool {
        raw.utf8.count > policy.usernameMaxLength * 4 * UnicodeTables.longestCanonicalDecomposition
    }

    /// The same rules for a name already through `Normalization.canonicalUsername`, so a caller that needs the
    /// canonical form anyway (to look it up) computes it once.
    public static func validate(canonical: String, policy: Policy) -> RuleOutcome {
        if canonical.isEmpty { return .settled(.empty) }
        if let verdict = validateASCII(canonical, policy: policy) { return verdict }
        // Code points, not graphemes: "abcdef" with 12,000 combining marks is six characters long.
        if canonical.unicodeScalars.count > policy.usernameMaxLength { return .settled(.invalid(.tooLong)) }
        if canonical.count < policy.usernameMinLength { return .settled(.invalid(.tooShort)) }
        if canonical.contains(where: { isForbidden($0, policy: policy) }) {
            return .settled(.invalid(.forbiddenCharacters))
        }
        if !IdentifierClass.allows(canonical) { return .settled(.invalid(.disallowedCharacter)) }
        if !BidiRule.allows(canonical) { return .settled(.invalid(.bidiRule)) }
        if !RestrictionLevel.isHighlyRestrictive(canonical) { return .settled(.invalid(.mixedScript)) }
        return .needsCheck
    }

    /// The rules above for a name of printable ASCII, byte by byte (nil for anything else, which takes the
    /// general path). There a character is one byte and one code point (no "\r\n" pair to count as one), the
    /// only whitespace or control character is the space, every other byte is in IdentifierClass (ASCII7),
    /// and all of it is Latin or Common and left-to-right.
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
