import Foundation

/// The canonical forms of identifiers and secrets (RFC 8265 PRECIS profiles, contract §6, DESIGN "The store").
public enum Normalization {
    /// PRECIS UsernameCaseMapped: width-mapped, lower-cased, then NFC. Comparison and storage use this form,
    /// so "ＡＬＩＣＥ１２" and "alice12" are one account. Validity (forbidden characters) is judged separately.
    public static func canonicalUsername(_ raw: String) -> String {
        widthMapped(raw).lowercased().precomposedStringWithCanonicalMapping
    }

    /// PRECIS OpaqueString: every non-ASCII space becomes U+0020, then NFC, or NFKC when the hardened policy
    /// asks for it, so a password typed on another keyboard or OS still verifies.
    public static func normalizedPassword(_ password: Secret, nfkc: Bool) -> Secret {
        var scalars = String.UnicodeScalarView()
        for scalar in password.exposed.unicodeScalars {
            let isOtherSpace = scalar.value != 0x20 && scalar.properties.generalCategory == .spaceSeparator
            scalars.append(isOtherSpace ? " " : scalar)
        }
        let spaced = String(scalars)
        return Secret(nfkc ? spaced.precomposedStringWithCompatibilityMapping
                           : spaced.precomposedStringWithCanonicalMapping)
    }

    /// The log-in field takes a username or an email; each is canonicalized the way it is stored.
    public static func canonicalLoginIdentifier(_ raw: String) -> String {
        raw.contains("@") ? canonicalEmail(raw) : canonicalUsername(raw)
    }

    /// Emails are compared case-insensitively as a whole: real mail systems treat the local part so, and
    /// refusing "Bob@x.org" next to "bob@x.org" avoids two accounts for one mailbox.
    public static func canonicalEmail(_ raw: String) -> String {
        raw.lowercased().precomposedStringWithCanonicalMapping
    }

    /// RFC 8265 §3.3.1 step 1: only <wide> and <narrow> compatibility mappings apply, which all live in
    /// U+3000 and the Halfwidth and Fullwidth Forms block; NFKC of the whole string would fold far more (ﬁ → fi).
    private static func widthMapped(_ raw: String) -> String {
        var result = ""
        for scalar in raw.unicodeScalars {
            if scalar.value == 0x3000 || (0xFF00...0xFFEF).contains(scalar.value) {
                result += String(Character(scalar)).precomposedStringWithCompatibilityMapping
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
