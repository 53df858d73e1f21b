import Testing
@testable import RosterCore

private typealias Script = UnicodeTables.Script


/// Issue 12 §10: usernames are PRECIS UsernameCaseMapped (RFC 8265) — IdentifierClass code points, the Bidi
/// Rule — and single-script (UTS #39 Highly Restrictive), with a length cap in code points.
@Suite("Username identifier rules")
struct UsernameIdentifierTests {
    private static func code(_ name: String) -> FieldCode? {
        switch UsernameRules.validate(name, policy: .seed) {
        case .settled(let verdict): verdict.code
        case .needsCheck: nil
        }
    }

    /// One or more code points of each RFC 8264 §9 category, with IdentifierClass's verdict on it.
    @Test(arguments: [
        // LetterDigits
        (0x00E9, IdentifierClass.Property.valid), (0x0436, .valid), (0x4E2D, .valid), (0x0967, .valid),
        (0x0301, .valid), (0x0903, .valid), (0x3005, .valid), (0xAC00, .valid),
        // Exceptions (RFC 5892 §2.6)
        (0x00DF, .valid), (0x03C2, .valid), (0x3007, .valid), (0x0F0B, .valid),
        (0x00B7, .contextual), (0x0375, .contextual), (0x05F3, .contextual), (0x30FB, .contextual),
        (0x0663, .contextual), (0x06F3, .contextual), (0x0640, .disallowed), (0x07FA, .disallowed), (0x3031, .disallowed),
        // Unassigned, and assigned after the tables' Unicode 15.0
        (0x0378, .disallowed), (0x10D40, .disallowed),
        // ASCII7 (the policy's forbidden characters are a separate rule)
        (0x0021, .valid), (0x007E, .valid), (0x0061, .valid),
        // JoinControl
        (0x200C, .joinControl), (0x200D, .joinControl),
        // OldHangulJamo
        (0x1100, .disallowed), (0x1160, .disallowed), (0xA960, .disallowed), (0xD7B0, .disallowed),
        // PrecisIgnorableProperties: default-ignorable and noncharacters
        (0x3164, .disallowed), (0xFE0F, .disallowed), (0x00AD, .disallowed), (0x180B, .disallowed),
        (0xFDD0, .disallowed), (0xFFFF, .disallowed),
        // Controls
        (0x0085, .disallowed), (0x001F, .disallowed),
        // Spaces
        (0x00A0, .disallowed), (0x2003, .disallowed), (0x3000, .disallowed),
        // Symbols
        (0x1F600, .disallowed), (0x00A9, .disallowed), (0x20AC, .disallowed), (0x2764, .disallowed),
        // Punctuation
        (0x00BF, .disallowed), (0x3001, .disallowed), (0x2010, .disallowed),
        // HasCompat
        (0x1D41A, .disallowed), (0xFB01, .disallowed), (0x2170, .disallowed), (0x00B9, .disallowed),
        (0x02B0, .disallowed), (0xFF21, .disallowed),
        // OtherLetterDigits: Lt, Nl, No, Me
        (0x01C5, .disallowed), (0x16EE, .disallowed), (0x0F33, .disallowed), (0x20DD, .disallowed),
        // Private use and format characters fall through to DISALLOWED
        (0xE000, .disallowed), (0x0600, .disallowed),
    ] as [(UInt32, IdentifierClass.Property)])
    func eachCategoryOfIdentifierClass(_ value: UInt32, _ expected: IdentifierClass.Property) throws {
        let scalar = try #require(Unicode.Scalar(value))
        #expect(IdentifierClass.property(of: scalar) == expected, "U+\(String(value, radix: 16, uppercase: true))")
    }

    @Test func theLookAlikesOfTheIssueAreEachRefused() {
        #expect(Self.code("alice1") == nil)
        #expect(Self.code("alice1\u{3164}") == .disallowedCharacter)
        #expect(Self.code("alice1\u{FE0F}") == .disallowedCharacter)
        #expect(Self.code("𝐚𝐥𝐢𝐜𝐞𝟏") == .disallowedCharacter)
        #expect(Self.code("ﬁlice1") == .disallowedCharacter)
        #expect(Self.code("alⅰce1") == .disallowedCharacter)
        #expect(Self.code("alice¹") == .disallowedCharacter)
        #expect(Self.code("alice😀") == .disallowedCharacter)
        #expect(Self.code("😀😀😀😀😀😀") == .disallowedCharacter)
        #expect(Self.code("\u{0430}lice1") == .mixedScript)
    }

    @Test(arguments: [
        // Names that pass, in many scripts.
        ("josé12", nil), ("Jose\u{301}12", nil), ("用户名测试一二", nil), ("алиса1", nil), ("김수현님안녕", nil),
        ("ελληνικά", nil), ("नमस्ते१२३४", nil), ("ＡＬＩＣＥ１２", nil), ("straße", nil), ("ᄀ\u{1161}나다라마바", nil),
        // Context rules (RFC 5892 Appendix A)
        ("col·lega", nil), ("abc·def", .disallowedCharacter), ("·llobet", .disallowedCharacter),
        ("αβγ\u{375}δεζ", nil), ("abcdef\u{375}1", .disallowedCharacter),
        ("שלו\u{5F3}םם", nil), ("\u{5F3}שלוםם", .disallowedCharacter),
        ("タロウ・ヤマダ", nil), ("abc・defg", .disallowedCharacter),
        ("مرحبا١٢", nil), ("مرحبا۱۲", nil), ("مرحبا١۲", .disallowedCharacter),
        // The seed refuses every format character, join controls included, before IdentifierClass would.
        ("क्\u{200D}षत्रियमहाराज", .forbiddenCharacters), ("abc\u{200C}def", .forbiddenCharacters),
        ("abcdef\u{1100}", .disallowedCharacter), ("ᄀᄀᄀᄀᄀᄀ", .tooShort),
        // Seed rules keep their codes and come first.
        ("alice 1", .forbiddenCharacters), ("alice\u{A0}1", .forbiddenCharacters), ("alice\u{200B}1", .forbiddenCharacters),
        ("ａｌｉｃｅ！", .forbiddenCharacters), ("alice\u{7}1", .forbiddenCharacters),
    ] as [(String, FieldCode?)])
    func namesAndTheirCodes(_ name: String, _ expected: FieldCode?) {
        #expect(Self.code(name) == expected, "\(name.unicodeScalars.map { String($0.value, radix: 16) })")
    }

    @Test(arguments: [
        // Single scripts, with Common digits and Inherited marks.
        ("alice1", true), ("алиса1", true), ("алиса_1", true), ("alice_~1", true), ("क्\u{200D}षत्रिय", true), ("алѝса1", true), ("ελληνικά", true), ("עברית", true),
        // Latin with the writing systems that mix scripts.
        ("tanaka太郎", true), ("たなかタロウ漢字", true), ("kim김수현", true), ("ㄅㄆ中文ab", true), ("ーたなか", true),
        // Mixed.
        ("\u{0430}lice1", false), ("alicε1", false), ("αлиса1", false), ("김수たなか", false), ("김수ㄅㄆ", false),
        ("abcաբգ", false), ("עבריתعربي", false), ("abc१२३", false), ("kim김수현たなか", false),
    ])
    func restrictionLevel(_ name: String, _ passes: Bool) {
        #expect(RestrictionLevel.isHighlyRestrictive(name) == passes, "\(name)")
    }

    @Test(arguments: [
        // No right-to-left character: the rule does not apply.
        ("123abc", true), ("abc-", true),
        // Right-to-left names.
        ("مرحبا", true), ("مرحبا123", true), ("مرحبا١٢٣", true), ("שלום.שלום", true), ("مَرحَبا", true),
        ("مرحبا\u{64B}", true),
        // Rule 1: starts with R or AL.
        ("123مرحبا", false), ("١٢٣مرحبا", false), ("-שלום", false),
        // Rules 2 and 5: no left-to-right letters in a right-to-left name, nor the other way round.
        ("abcمرحبا", false), ("مرحباabc", false), ("abc١٢٣", false),
        // Rule 3: ends in R, AL, EN or AN, then marks.
        ("مرحبا-", false), ("שלום.", false),
        // Rule 4: not both European and Arabic digits.
        ("مرحبا١٢3", false),
    ])
    func bidiRule(_ name: String, _ passes: Bool) {
        #expect(BidiRule.allows(name) == passes, "\(name)")
    }

    @Test func joinControlsOnlyAfterAVirama() {
        #expect(IdentifierClass.allows("क्\u{200D}ष"))
        #expect(IdentifierClass.allows("क्\u{200C}ष"))
        #expect(!IdentifierClass.allows("abc\u{200D}def"))
        #expect(!IdentifierClass.allows("\u{200D}abc"))
    }

    @Test func bidiRuleCodeComesFromTheRules() {
        #expect(Self.code("123مرحبا") == .bidiRule)
        #expect(Self.code("مرحبا123") == nil)
    }

    @Test func lengthIsCappedInCodePointsAndBytes() {
        let marks = String(repeating: "\u{301}", count: 12_000)
        #expect(Self.code("abcdef" + marks) == .tooLong)
        #expect(UsernameRules.isTooLongToNormalize("abcdef" + marks, policy: .seed))
        // Within the byte cap, the code points decide: 64 pass, 65 do not, whatever the graphemes say.
        #expect(Self.code("abcdef" + String(repeating: "\u{301}", count: 58)) == nil)
        #expect(Self.code("abcdef" + String(repeating: "\u{301}", count: 59)) == .tooLong)
        #expect(Self.code(String(repeating: "é", count: 64)) == nil)
        #expect(Self.code(String(repeating: "é", count: 65)) == .tooLong)
        // Too long beats too short: one grapheme of 65 code points.
        #expect(Self.code("x" + String(repeating: "\u{301}", count: 64)) == .tooLong)
    }

    @Test func theByteCapNeverRefusesANameThatNormalizesShortEnough() {
        // 64 code points, each typed fully decomposed into four (ᾂ = α + ̓ + ̀ + ͅ): NFC gives 64 again.
        let decomposed = String(repeating: "\u{3B1}\u{313}\u{300}\u{345}", count: 64)
        #expect(!UsernameRules.isTooLongToNormalize(decomposed, policy: .seed))
        #expect(Normalization.canonicalUsername(decomposed).unicodeScalars.count == 64)
        #expect(Self.code(decomposed) == nil)
    }

    @Test func theGeneratedTablesNameTheScriptsTheCodeUses() {
        let named: [(UInt8, String)] = [(Script.common, "Common"), (Script.inherited, "Inherited"),
                                        (Script.latin, "Latin"), (Script.han, "Han"), (Script.hiragana, "Hiragana"),
                                        (Script.katakana, "Katakana"), (Script.bopomofo, "Bopomofo"),
                                        (Script.hangul, "Hangul"), (Script.greek, "Greek"), (Script.hebrew, "Hebrew")]
        for (id, name) in named { #expect(UnicodeTables.scriptNames[Int(id)] == name) }
        #expect(UnicodeTables.scriptNames.count < Int(ScriptSet.japanese))
        #expect(zip(UnicodeTables.scriptRuns, UnicodeTables.scriptRuns.dropFirst()).allSatisfy { $0 >> 8 < $1 >> 8 })
        #expect(zip(UnicodeTables.bidiRuns, UnicodeTables.bidiRuns.dropFirst()).allSatisfy { $0 >> 8 < $1 >> 8 })
        #expect(UnicodeProperties.scripts(of: "a") == ScriptSet([Script.latin]))
        #expect(UnicodeProperties.scripts(of: "1") == nil)
        #expect(UnicodeProperties.scripts(of: "\u{301}") == nil)
        #expect(UnicodeProperties.scripts(of: "\u{5D0}") == ScriptSet([Script.hebrew]))
        #expect(UnicodeProperties.bidiGroup(of: "\u{5D0}") == .rightToLeft)
        #expect(UnicodeProperties.bidiGroup(of: "\u{627}") == .rightToLeft)
        #expect(UnicodeProperties.bidiGroup(of: "\u{661}") == .arabicNumber)
        #expect(UnicodeProperties.bidiGroup(of: "\u{6F1}") == .europeanNumber)
        #expect(UnicodeProperties.bidiGroup(of: "\u{7C1}") == .rightToLeft)
        #expect(UnicodeProperties.bidiGroup(of: "\u{64B}") == .nonSpacingMark)
        #expect(UnicodeProperties.bidiGroup(of: "\u{CBF}") == .leftToRight)
        #expect(UnicodeProperties.bidiGroup(of: "é") == .leftToRight)
    }
}
