import Testing
@testable import RosterCore

@Suite("Rules and normalization")
struct RulesTests {
    @Test func canonicalUsernameIsWidthMappedLowercasedNFC() {
        #expect(Normalization.canonicalUsername("ＡＬＩＣＥ１２") == "alice12")
        #expect(Normalization.canonicalUsername("Alice12") == "alice12")
        // Half-width katakana with a separate voicing mark composes to one character.
        #expect(Normalization.canonicalUsername("ｶﾞ") == "ガ")
        // Only width mappings apply: a ligature is not folded as NFKC would.
        #expect(Normalization.canonicalUsername("ﬁsh") == "ﬁsh")
        #expect(Normalization.canonicalUsername("Jose\u{301}").unicodeScalars.map(\.value)
                == "josé".unicodeScalars.map(\.value))
    }

    @Test func passwordsComposedAndDecomposedAreEqual() {
        let composed = Normalization.normalizedPassword(Secret("caf\u{E9}secret"), nfkc: false)
        let decomposed = Normalization.normalizedPassword(Secret("cafe\u{301}secret"), nfkc: false)
        #expect(composed.exposed.unicodeScalars.elementsEqual(decomposed.exposed.unicodeScalars))
        #expect(PasswordRules.confirm(Secret("cafe\u{301}secret"), password: Secret("caf\u{E9}secret"),
                                      policy: .seed) == .valid(.valid))
    }

    @Test func passwordSpacesAndCompatibility() {
        #expect(Normalization.normalizedPassword(Secret("a\u{00A0}b\u{3000}c"), nfkc: false).exposed == "a b c")
        #expect(Normalization.normalizedPassword(Secret("ｐａｓｓ"), nfkc: false).exposed == "ｐａｓｓ")
        #expect(Normalization.normalizedPassword(Secret("ｐａｓｓ"), nfkc: true).exposed == "pass")
    }

    @Test func secretsNeverPrint() {
        let secret = Secret("hunter22")
        #expect("\(secret)" == "<redacted>")
        #expect(String(reflecting: secret) == "<redacted>")
        let action = FormAction.login(username: "alice1", password: secret, code: nil)
        #expect(!"\(action)".contains("hunter22"))
        #expect(!String(reflecting: action).contains("hunter22"))
        var dumped = ""
        dump(action, to: &dumped)
        #expect(!dumped.contains("hunter22"))
        var form = RegisterForm(policy: .seed, debounce: .milliseconds(500))
        _ = try? form.inputReceived(field: .username, value: "alice1", now: .zero)
        var dumpedForm = ""
        dump(form, to: &dumpedForm)
        #expect(!dumpedForm.contains("alice1"))
    }

    @Test(arguments: [
        ("", RuleOutcome.settled(.empty)),
        ("abc", .settled(.invalid(.tooShort))),
        ("alice", .settled(.invalid(.tooShort))),
        ("alice1", .needsCheck),
        ("ＡＬＩＣＥ１２", .needsCheck),
        ("alice!", .settled(.invalid(.forbiddenCharacters))),
        ("ａｌｉｃｅ！", .settled(.invalid(.forbiddenCharacters))),
        ("alice 1", .settled(.invalid(.forbiddenCharacters))),
        ("alice\u{7}1", .settled(.invalid(.forbiddenCharacters))),
        ("用户名测试一二", .needsCheck),
        (String(repeating: "a", count: 64), .needsCheck),
        (String(repeating: "a", count: 65), .settled(.invalid(.tooLong))),
    ])
    func usernameRules(_ input: String, _ expected: RuleOutcome) {
        #expect(UsernameRules.validate(input, policy: .seed) == expected)
    }

    @Test(arguments: [
        ("", RuleOutcome.settled(.empty)),
        ("abcde", .settled(.invalid(.tooShort))),
        ("abcdef", .settled(.valid(.valid))),
        ("abc#def", .settled(.invalid(.forbiddenCharacters))),
        ("abc\u{0}def", .settled(.invalid(.forbiddenCharacters))),
        ("密码六个字符", .settled(.valid(.valid))),
        (String(repeating: "a", count: 129), .settled(.invalid(.tooLong))),
    ])
    func seedPasswordRules(_ input: String, _ expected: RuleOutcome) {
        #expect(PasswordRules.validate(Secret(input), policy: .seed) == expected)
    }

    @Test func hardenedPasswordLengthsAreScalarsAfterNFKC() {
        let policy = Policy.hardened
        func outcome(_ text: String) -> RuleOutcome { PasswordRules.validate(Secret(text), policy: policy) }
        #expect(outcome(String(repeating: "a", count: 14)) == .settled(.invalid(.tooShort)))
        #expect(outcome(String(repeating: "a", count: 15)) == .needsCheck)
        #expect(outcome(String(repeating: "a", count: 128)) == .needsCheck)
        #expect(outcome(String(repeating: "a", count: 129)) == .settled(.invalid(.tooLong)))
        // Decomposed é composes to one scalar first.
        #expect(outcome(String(repeating: "e\u{301}", count: 14)) == .settled(.invalid(.tooShort)))
        #expect(outcome(String(repeating: "e\u{301}", count: 15)) == .needsCheck)
        // 👍🏽 is one character but two scalars: 8 of them are 16 scalars.
        #expect(outcome(String(repeating: "👍🏽", count: 8)) == .needsCheck)
        #expect(outcome(String(repeating: "👍🏽", count: 7)) == .settled(.invalid(.tooShort)))
        // No forbidden set: any printable text.
        #expect(outcome("!@#$%^&*()!@#$%^") == .needsCheck)
        // Seed counts characters.
        #expect(PasswordRules.validate(Secret(String(repeating: "👍🏽", count: 6)), policy: .seed) == .settled(.valid(.valid)))
    }

    @Test func confirmRules() {
        #expect(PasswordRules.confirm(Secret(""), password: Secret("secret1"), policy: .seed) == .empty)
        #expect(PasswordRules.confirm(Secret("secret2"), password: Secret("secret1"), policy: .seed) == .invalid(.mismatch))
        #expect(PasswordRules.confirm(Secret("secret1"), password: Secret("secret1"), policy: .seed) == .valid(.valid))
        #expect(PasswordRules.confirm(Secret("ｐａｓｓ"), password: Secret("pass"), policy: .seed) == .invalid(.mismatch))
        #expect(PasswordRules.confirm(Secret("ｐａｓｓ"), password: Secret("pass"), policy: .hardened) == .valid(.valid))
    }

    @Test(arguments: [
        ("a@b.co", true), ("A.B+c%d-e_f@x-y.Example.COM", true), ("a@b..co", true),
        ("a@b.c", false), ("@b.co", false), ("a@.co", false), ("a@b.co1", false), ("a b@c.co", false),
        ("a@b@c.co", false), ("ab.co", false), ("a@bco", false), ("é@b.co", false), ("a@b.co\n", false),
        ("a@b." + String(repeating: "x", count: 64), true), ("a@b." + String(repeating: "x", count: 65), false),
        ("a@b-.c-o", false), ("a@1.2.io", true),
    ])
    func emailPattern(_ input: String, _ valid: Bool) {
        #expect(EmailRules.isWellFormed(input) == valid)
    }

    @Test func emailRules() {
        #expect(EmailRules.validate("") == .settled(.empty))
        #expect(EmailRules.validate("nope") == .settled(.invalid(.invalidEmail)))
        #expect(EmailRules.validate("a@b.co") == .needsCheck)
        #expect(EmailRules.validate(String(repeating: "a", count: 250) + "@b.co") == .settled(.invalid(.tooLong)))
    }

    @Test func qualityReasonsMapToKnownCodes() {
        #expect(FieldCode.quality("dictionary_word") == .dictionaryWord)
        #expect(FieldCode.quality("contains_username") == .containsUsername)
        #expect(FieldCode.quality("too_short") == .weak)
        #expect(FieldCode.quality("it is based on a dictionary word") == .weak)
    }

    @Test func hardenedRegisterAsksLibpwquality() throws {
        var driver = FormDriver(RegisterForm(policy: .hardened, debounce: .milliseconds(500)))
        try driver.type(.username, "alice1")
        driver.advance(to: 500)
        driver.answer(token(1), .available)
        _ = driver.take()
        try driver.type(.password, "correct horse battery")
        driver.advance(to: 1000)
        #expect(driver.take() == [
            debounce(.password, at: 1000),
            fieldEvent(.password, .validating, .validating, rev: 1),
            .startCheck(.passwordQuality(password: Secret("correct horse battery"), username: "alice1"),
                        token: token(2)),
        ])
        driver.answer(token(2), .qualityFailed(reason: "dictionary_word"))
        #expect(driver.take() == [fieldEvent(.password, .invalid, .dictionaryWord, rev: 1)])
        try driver.type(.password, "alice1alice1alice1")
        driver.advance(to: 1500)
        driver.answer(token(3), .qualityFailed(reason: "whatever libpwquality says"))
        #expect(driver.take() == [
            debounce(.password, at: 1500),
            fieldEvent(.password, .validating, .validating, rev: 2),
            .startCheck(.passwordQuality(password: Secret("alice1alice1alice1"), username: "alice1"),
                        token: token(3)),
            fieldEvent(.password, .invalid, .weak, rev: 2),
        ])
        try driver.type(.password, "ｔｒｏｕｂａｄｏｕｒ ｓｔａｐｌｅ")
        driver.advance(to: 2000)
        driver.answer(token(4), .qualityPassed)
        #expect(driver.take() == [
            debounce(.password, at: 2000),
            fieldEvent(.password, .validating, .validating, rev: 3),
            .startCheck(.passwordQuality(password: Secret("troubadour staple"), username: "alice1"), token: token(4)),
            fieldEvent(.password, .valid, .valid, rev: 3),
            fieldEvent(.confirm, .empty, .empty, enabled: true, rev: 0),
        ])
        // A too-short one fails locally, without asking.
        try driver.type(.password, String(repeating: "x", count: 14))
        driver.advance(to: 2500)
        #expect(driver.take() == [
            debounce(.password, at: 2500),
            fieldEvent(.password, .invalid, .tooShort, rev: 4),
            fieldEvent(.confirm, .empty, .empty, enabled: false, rev: 0),
        ])
    }

    @Test func policyChangeAppliesToNewInput() throws {
        var driver = FormDriver(RegisterForm(policy: .seed, debounce: .milliseconds(500)))
        try driver.type(.username, "alice1")
        driver.advance(to: 500)
        driver.answer(token(1), .available)
        try driver.type(.password, "secret1")
        driver.advance(to: 1000)
        _ = driver.take()
        driver.form.policyChanged(.hardened)
        #expect(driver.take() == [])
        #expect(driver.form.snapshot.fields[1].state == .valid)
        try driver.type(.password, "secret2")
        driver.advance(to: 1500)
        #expect(driver.take() == [debounce(.password, at: 1500), fieldEvent(.password, .invalid, .tooShort, rev: 2),
                                  fieldEvent(.confirm, .empty, .empty, enabled: false, rev: 0)])
    }
}
