/// RFC 5893 §2's Bidi Rule, which RFC 8265 applies to a username holding right-to-left characters, so that
/// a name displays in one reading order and no part of it can be reordered to look like another name.
public enum BidiRule {
    /// Whether `name` passes: a name without R, AL or AN characters always does.
    public static func allows(_ name: String) -> Bool {
        let groups = name.unicodeScalars.map(UnicodeProperties.bidiGroup(of:))
        guard groups.contains(where: { $0 == .rightToLeft || $0 == .arabicNumber }) else { return true }
        // Rule 1: a name that starts with L is left-to-right, and rule 5 then refuses its R, AL and AN.
        guard groups.first == .rightToLeft else { return false }
        // Rule 2.
        guard !groups.contains(where: { $0 == .leftToRight || $0 == .other }) else { return false }
        // Rule 3: it ends in R, AL, EN or AN, then any number of NSM.
        switch groups.last(where: { $0 != .nonSpacingMark }) {
        case .rightToLeft?, .europeanNumber?, .arabicNumber?: break
        case .leftToRight?, .neutral?, .nonSpacingMark?, .other?, nil: return false
        }
        // Rule 4.
        return !(groups.contains(.europeanNumber) && groups.contains(.arabicNumber))
    }
}
