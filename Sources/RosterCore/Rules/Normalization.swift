import Foundation

/// The canonical forms of identifiers and secrets (RFC 8265 PRECIS profiles, DESIGN "The store").
public enum Normalization {
    /// PRECIS UsernameCaseMapped: width-mapped, lower-cased, then NFC. Comparison and storage use this form,
    /// so "ＡＬＩＣＥ１２" and "alice12" are one account. Validity (forbidden characters) is judged separately.
    public static func canonicalUsername(_ raw: String) -> String {
        // ASCII is its own width mapping and its own NFC, so lower-casing is all that is left; it is what
        // nearly every name is, and Foundation's normalization costs microseconds a call (a profile of check_username showed it).
        if let ascii = asciiLowercased(raw) { return ascii }
        return widthMapped(raw).lowercased().precomposedStringWithCanonicalMapping
    }

    /// `raw` lower-cased when it is all ASCII, else nil.
    private static func asciiLowercased(_ raw: String) -> String? {
        let lowered = raw.utf8.withContiguousStorageIfAvailable { bytes -> String? in
            guard !bytes.contains(where: { $0 >= 0x80 }) else { return nil }
            guard bytes.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return raw }
            return String(unsafeUninitializedCapacity: bytes.count) { out in
                for (index, byte) in bytes.enumerated() { out[index] = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte }
                return bytes.count
            }
        }
        // Bridged or otherwise non-contiguous strings take the general path.
        return lowered ?? nil
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
