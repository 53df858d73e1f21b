/// The register form's optional email (protocol.md "Register form"; the pattern of seeds 002 and 004).
public enum EmailRules {
    /// RFC 5321's limit on a forward path; the seeds' pattern alone would accept any length.
    public static let maxLength = 254

    /// Empty is fine (the field is optional); a well-formed address still needs the database for `taken`.
    public static func validate(_ raw: String) -> RuleOutcome {
        if raw.isEmpty { return .settled(.empty) }
        if raw.unicodeScalars.count > maxLength { return .settled(.invalid(.tooLong)) }
        return isWellFormed(raw) ? .needsCheck : .settled(.invalid(.invalidEmail))
    }

    /// A whole-string match of `[A-Z0-9a-z._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,64}`.
    ///
    /// Neither side of the `@` may hold another `@`, and the top-level label has no dot, so the pattern
    /// matches exactly when the domain's last dot has a non-empty prefix and 2–64 letters after it.
    public static func isWellFormed(_ raw: String) -> Bool {
        let scalars = Array(raw.unicodeScalars)
        guard let at = scalars.firstIndex(of: "@") else { return false }
        let local = scalars[..<at]
        let domain = scalars[(at + 1)...]
        guard !local.isEmpty, local.allSatisfy(isLocalScalar) else { return false }
        guard domain.allSatisfy(isDomainScalar), let dot = domain.lastIndex(of: ".") else { return false }
        let label = domain[(dot + 1)...]
        return dot > domain.startIndex && (2...64).contains(label.count) && label.allSatisfy(isASCIILetter)
    }

    private static func isASCIILetter(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
    }

    private static func isASCIIDigit(_ scalar: Unicode.Scalar) -> Bool { ("0"..."9").contains(scalar) }

    private static func isLocalScalar(_ scalar: Unicode.Scalar) -> Bool {
        isASCIILetter(scalar) || isASCIIDigit(scalar) || "._%+-".unicodeScalars.contains(scalar)
    }

    private static func isDomainScalar(_ scalar: Unicode.Scalar) -> Bool {
        isASCIILetter(scalar) || isASCIIDigit(scalar) || scalar == "." || scalar == "-"
    }
}
