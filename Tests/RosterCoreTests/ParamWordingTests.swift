import Testing
@testable import RosterCore

@Suite("Wording of a method's new password")
struct ParamWordingTests {
    /// Without it a client read `new_password.too_short` as the message: the key, for want of a text.
    /// `new_password` (`auth.recover`) has no field of its own, so it reads as the register form's password.
    @Test(arguments: RosterLocale.allCases)
    func aRecoveryNewPasswordIsWordedByTheRegisterFormsPasswordRules(_ locale: RosterLocale) {
        let error = RosterError.invalidField(field: "new_password", code: FieldCode.tooShort.rawValue)
        let wording = MessageCatalog.message(for: .invalidField(field: "password", code: FieldCode.tooShort.rawValue),
                                             locale: locale, arguments: ["min": "6"])
        #expect(MessageCatalog.message(for: error, locale: locale, arguments: ["min": "6"]) == wording)
        #expect(!wording.contains("too_short"))
    }

    /// `account.change_password`'s `new` reads as the password form's `new` field, which has texts of its own
    /// ("the new password …"), and never as a key.
    @Test(arguments: RosterLocale.allCases)
    func aChangedPasswordIsWordedByThePasswordFormsNewField(_ locale: RosterLocale) {
        let error = RosterError.invalidField(field: "new", code: FieldCode.tooShort.rawValue)
        let text = MessageCatalog.message(for: error, locale: locale, arguments: ["min": "6"])
        #expect(text == MessageCatalog.text("new.too_short", locale: locale, arguments: ["min": "6"]))
        #expect(text != MessageCatalog.message(for: .invalidField(field: "password", code: FieldCode.tooShort.rawValue),
                                               locale: locale, arguments: ["min": "6"]))
        #expect(!text.contains("too_short"))
    }

    @Test func anyOtherParamKeepsItsOwnWords() {
        #expect(FieldName.wording(param: "email") == .email)
        #expect(FieldName.wording(param: "current") == FieldName(rawValue: "current"))
    }
}
