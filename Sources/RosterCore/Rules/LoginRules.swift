/// The log-in form's rules (protocol.md "Log-in form"): no password rules, and the username is checked for existence only
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

    /// A one-time code as sent: its six digits, or nil when it is not six digits. Spaces are dropped (apps show
    /// "123 456") and any script's decimal digits read as ASCII, so a full-width IME's ６ counts as 6.
    public static func normalizedCode(_ raw: Secret) -> String? {
        var digits = ""
        for character in raw.exposed where !character.isWhitespace {
            guard character.unicodeScalars.count == 1, let scalar = character.unicodeScalars.first,
                  scalar.properties.numericType == .decimal, let value = character.wholeNumberValue else { return nil }
            digits.append(Character(String(value)))
        }
        return digits.count == 6 ? digits : nil
    }

    /// A code as a method received it: its six ASCII digits when it reads as six digits (as the `code` field
    /// takes it), else exactly as sent, to be refused as `invalid_code` and counted.
    public static func typedCode(_ raw: String) -> String {
        normalizedCode(Secret(raw)) ?? raw
    }

    /// The login form's `code` field: empty, six digits (valid), or `not_six_digits`; the store decides the rest.
    public static func code(_ raw: Secret) -> FieldVerdict {
        if raw.exposed.allSatisfy(\.isWhitespace) { return .empty }
        return normalizedCode(raw) == nil ? .invalid(.notSixDigits) : .valid(.valid)
    }
}
