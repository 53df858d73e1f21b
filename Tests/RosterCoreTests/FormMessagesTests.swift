import Testing
@testable import RosterCore

@Suite("Form messages")
struct FormMessagesTests {
    @Test func everyKeyHasEveryLocale() {
        for (key, texts) in FormMessages.table {
            for locale in RosterLocale.allCases {
                let text = texts[locale] ?? ""
                #expect(!text.isEmpty, "\(key) has no \(locale.rawValue) text")
            }
        }
    }

    @Test func translationsQuoteTheSamePlaceholders() {
        func placeholders(_ text: String) -> Set<String> {
            var found: Set<String> = []
            var rest = text[...]
            while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
                found.insert(String(rest[open...close]))
                rest = rest[rest.index(after: close)...]
            }
            return found
        }
        for (key, texts) in FormMessages.table {
            let reference = placeholders(texts[.zhHans] ?? "")
            for locale in RosterLocale.allCases {
                #expect(placeholders(texts[locale] ?? "") == reference, "\(key) in \(locale.rawValue)")
            }
        }
    }

    @Test func everyCodeAFormCanProduceHasAText() {
        for field in RegisterField.allCases {
            for code in field.possibleCodes {
                #expect(MessageCatalog.contains("\(field.name.rawValue).\(code.rawValue)"), "register \(field).\(code)")
            }
        }
        for field in LoginField.allCases {
            for code in field.possibleCodes {
                #expect(MessageCatalog.contains("\(field.name.rawValue).\(code.rawValue)"), "login \(field).\(code)")
            }
        }
        for field in PasswordField.allCases {
            for code in field.possibleCodes {
                #expect(MessageCatalog.contains("\(field.name.rawValue).\(code.rawValue)"), "password \(field).\(code)")
            }
        }
        for code in RegisterForm.possibleSubmitCodes {
            #expect(MessageCatalog.contains("register.\(code.rawValue)"))
        }
        for code in LoginForm.possibleSubmitCodes {
            #expect(MessageCatalog.contains("login.\(code.rawValue)"))
        }
        for code in PasswordForm.possibleSubmitCodes {
            #expect(MessageCatalog.contains("password.\(code.rawValue)"))
        }
        for code in FieldCode.qualityCodes {
            #expect(RegisterField.password.possibleCodes.contains(code))
            #expect(PasswordField.new.possibleCodes.contains(code))
        }
    }

    @Test func storeErrorsAboutFieldsAreTranslated() {
        // users.register answers these through MessageCatalog.message(for:).
        let policy = Policy.seed
        #expect(MessageCatalog.message(for: .taken(field: "username"), locale: .zhHans) == "用户名已存在")
        #expect(MessageCatalog.message(for: .invalidField(field: "username", code: "too_short"), locale: .zhHans,
                                       arguments: FieldName.username.messageArguments(policy: policy))
                == "用户名长度至少为6位")
        #expect(MessageCatalog.message(for: .invalidField(field: "password", code: "too_short"), locale: .en,
                                       arguments: FieldName.password.messageArguments(policy: .hardened))
                == "The password must be at least 15 characters long")
    }

    @Test(arguments: [
        ("username.too_short", "用户名长度至少为6位"),
        ("username.taken", "用户名已存在"),
        ("username.available", "用户名可用"),
        ("username.not_found", "用户名不存在"),
        ("username.validating", "校验中\u{2026}"),
        ("password.too_short", "密码长度至少为6位"),
        ("password.valid", "密码可用"),
        ("confirm.mismatch", "两次密码不一样"),
        ("register.succeeded", "注册成功"),
        ("register.failed", "注册失败"),
        ("login.wrong_password", "密码错误"),
        ("login.not_found", "用户名不存在"),
        ("login.succeeded", "登录成功"),
    ])
    func seedTextsAreExact(_ key: String, _ text: String) {
        let arguments = key.hasPrefix("username") ? FieldName.username.messageArguments(policy: .seed)
            : FieldName.password.messageArguments(policy: .seed)
        #expect(MessageCatalog.text(key, locale: .zhHans, arguments: arguments) == text)
    }

    @Test func eventsLocalizeWithPolicyNumbers() {
        let event = FormEvent.field(form: .register, field: .username, state: .invalid, code: .tooShort,
                                    enabled: true, rev: 1)
        #expect(event.message(locale: .zhHans, policy: .seed) == "用户名长度至少为6位")
        #expect(event.message(locale: .en, policy: .seed) == "The username must be at least 6 characters long")
        #expect(event.message(locale: .vi, policy: .seed) == "Tên đăng nhập phải có ít nhất 6 ký tự")
        #expect(event.message(locale: .ko, policy: .seed) == "아이디는 6자 이상이어야 합니다")
        #expect(FormEvent.form(form: .register, submittable: true).message(locale: .en, policy: .seed) == nil)
        #expect(FormEvent.submit(form: .login, state: .failed, code: .wrongPassword)
            .message(locale: .zhHans, policy: .seed) == "密码错误")
    }
}
