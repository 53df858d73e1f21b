import Testing
@testable import RosterCore

@Suite("Wording of a method's new password")
struct ParamWordingTests {
    /// Without it a client read `new_password.too_short` as the message: the key, for want of a text.
    @Test(arguments: ["new", "new_password"], RosterLocale.allCases)
    func aNewPasswordIsWordedByTheRegisterFormsPasswordRules(_ param: String, _ locale: RosterLocale) {
        let error = RosterError.invalidField(field: param, code: FieldCode.tooShort.rawValue)
        let wording = MessageCatalog.message(for: .invalidField(field: "password", code: FieldCode.tooShort.rawValue),
                                             locale: locale, arguments: ["min": "6"])
        #expect(MessageCatalog.message(for: error, locale: locale, arguments: ["min": "6"]) == wording)
        #expect(!wording.contains("too_short"))
    }

    @Test func anyOtherParamKeepsItsOwnWords() {
        #expect(FieldName.wording(param: "email") == .email)
        #expect(FieldName.wording(param: "current") == FieldName(rawValue: "current"))
    }
}
