import Testing
@testable import RosterCore

/// A failed submit's code is keyed by the error's reason, among the codes the form has messages for, with
/// `failed` the one fallback; asserted through the forms for every kind of error there is.
@Suite("Submit codes")
struct SubmitCodeTests {
    /// One error of every case (and every field a `taken` or `invalid_field` may name).
    static let errors: [RosterError] = {
        let all: [RosterError] = [
            .parseError, .invalidRequest(problem: "not_an_object"), .requestTooLarge(limit: 1),
            .methodNotFound(method: "m"), .unauthenticated, .forbidden, .unknownForm(form: "f"),
            .unknownField(form: "f", field: "x"), .formNotOpen(form: "f"), .fieldDisabled(form: "f", field: "x"),
            .notSubmittable(form: "register"), .notFound, .wrongPassword, .invalidCredentials, .locked, .codeRequired,
            .passkeyNeedsCode, .unknownPasskey, .invalidCode, .noEmail, .mailUnavailable, .preconditionFailed, .rateLimited(retryAfterMs: 1), .busy(retryAfterMs: 1), .answerTooLarge(size: 2, limit: 1), .storageFull,
            .storageUnavailable(retryAfterMs: 1), .internal,
        ] + ["challenge", "origin", "rp_id", "type", "user_present", "signature", "format", "duplicate", "counter"]
            .map { .passkeyRejected(why: $0) }
            + ParamProblem.allCases.map { .invalidParams(param: "p", problem: $0) }
            + ["username", "password", "email", "query", "nonsense"].map { .taken(field: $0) }
            + FieldCode.allCases.map { .invalidField(field: "username", code: $0.rawValue) }
        // Adding a case to RosterError stops this switch compiling until the case is in the list above.
        for error in all {
            switch error {
            case .parseError, .invalidRequest, .requestTooLarge, .methodNotFound, .invalidParams, .unauthenticated,
                 .forbidden, .unknownForm, .unknownField, .formNotOpen, .fieldDisabled, .notSubmittable, .invalidField,
                 .taken, .notFound, .wrongPassword, .invalidCredentials, .locked, .codeRequired, .passkeyNeedsCode,
                 .unknownPasskey, .invalidCode, .noEmail, .mailUnavailable, .passkeyRejected, .preconditionFailed, .rateLimited, .busy, .answerTooLarge,
                 .storageFull, .storageUnavailable, .internal:
                break
            }
        }
        return all
    }()

    /// What each form has always shown for a store failure: these and nothing else, all else `failed`.
    private static let registerCodes: [String: SubmitCode] = [
        "not_submittable": .notSubmittable, "taken": .taken, "busy": .busy, "storage_full": .storageFull,
        "storage_unavailable": .storageUnavailable,
    ]
    private static let loginCodes: [String: SubmitCode] = [
        "not_submittable": .notSubmittable, "not_found": .notFound, "wrong_password": .wrongPassword,
        "invalid_credentials": .invalidCredentials, "rate_limited": .rateLimited, "busy": .busy,
        "storage_unavailable": .storageUnavailable, "code_required": .codeRequired, "invalid_code": .invalidCode,
        "locked": .locked,
    ]
    private static let passwordCodes: [String: SubmitCode] = [
        "not_submittable": .notSubmittable, "wrong_password": .wrongPassword, "invalid_credentials": .invalidCredentials,
        "rate_limited": .rateLimited, "busy": .busy, "storage_full": .storageFull,
        "storage_unavailable": .storageUnavailable,
    ]

    /// The code a form has always shown for `error`: an `invalid_field` carries a field's code as its reason,
    /// and never a submit's.
    private static func expected(_ error: RosterError, in codes: [String: SubmitCode]) -> SubmitCode {
        if case .invalidField = error { return .failed }
        return codes[error.reason] ?? .failed
    }

    @Test(arguments: errors)
    func registerFailureShowsTheCodeItsReasonNames(error: RosterError) throws {
        var driver = try Self.submittedRegister()
        driver.complete(.failure(error))
        let events = driver.take()
        #expect(events.first == submitEvent(.failed, Self.expected(error, in: Self.registerCodes)))
        #expect(events.last == .finishSubmit(.failure(error)))
    }

    @Test(arguments: errors)
    func loginFailureShowsTheCodeItsReasonNames(error: RosterError) throws {
        var driver = FormDriver(LoginForm(policy: .hardened, debounce: .milliseconds(500)))
        try driver.type(.username, "alice1")
        try driver.type(.password, "correct horse battery")
        driver.advance(to: 500)
        driver.submit()
        _ = driver.take()
        driver.complete(.failure(error))
        // Log-in never marks a field from the store's answer, so the two actions are all there is; only a
        // `code_required` changes the form, by opening its code field (LoginFormTests has that whole history).
        let opened = error == .codeRequired
            ? [fieldEvent(.code, .empty, .empty, rev: 0, form: .login), submittable(false, form: .login)] : []
        #expect(driver.take() == [submitEvent(.failed, Self.expected(error, in: Self.loginCodes), form: .login)]
                + opened + [.finishSubmit(.failure(error))])
    }

    @Test(arguments: errors)
    func passwordFailureShowsTheCodeItsReasonNames(error: RosterError) throws {
        var driver = FormDriver(PasswordForm(policy: .seed, username: "alice1", debounce: .milliseconds(500)))
        try driver.type(.current, "secret1")
        try driver.type(.new, "secret2")
        driver.advance(to: 500)
        try driver.type(.confirm, "secret2")
        driver.advance(to: 1000)
        driver.submit()
        _ = driver.take()
        driver.complete(.failure(error))
        // The password form marks no field from the store's answer: what was typed stays, to be corrected.
        #expect(driver.take() == [submitEvent(.failed, Self.expected(error, in: Self.passwordCodes), form: .password),
                                  .finishSubmit(.failure(error))])
    }

    @Test func everyFailureCodeAFormOffersIsSomeErrorsReason() {
        let reasons = Set(Self.errors.map(\.reason))
        for code in RegisterRulebook.failureCodes + LoginRulebook.failureCodes + PasswordRulebook.failureCodes {
            #expect(reasons.contains(code.rawValue), "\(code) is keyed by no error's reason")
        }
        #expect(Dictionary(uniqueKeysWithValues: RegisterRulebook.failureCodes.map { ($0.rawValue, $0) })
                == Self.registerCodes)
        #expect(Dictionary(uniqueKeysWithValues: LoginRulebook.failureCodes.map { ($0.rawValue, $0) })
                == Self.loginCodes)
        #expect(Dictionary(uniqueKeysWithValues: PasswordRulebook.failureCodes.map { ($0.rawValue, $0) })
                == Self.passwordCodes)
    }

    @Test func aTakenMarksOnlyAFieldTheStoreKeys() throws {
        for field in ["password", "confirm", "query", "nonsense"] {
            var driver = try Self.submittedRegister()
            driver.complete(.failure(.taken(field: field)))
            #expect(driver.take() == [submitEvent(.failed, .taken), .finishSubmit(.failure(.taken(field: field)))])
        }
        var driver = try Self.submittedRegister(email: "A@b.co")
        driver.complete(.failure(.taken(field: "email")))
        #expect(driver.take() == [submitEvent(.failed, .taken), fieldEvent(.email, .invalid, .taken, rev: 1),
                                  submittable(false), .finishSubmit(.failure(.taken(field: "email")))])
    }

    /// A register form whose submit is out with the store, history cleared.
    private static func submittedRegister(email: String? = nil) throws -> FormDriver<RegisterRulebook> {
        var driver = try filledRegisterDriver()
        if let email {
            try driver.type(.email, email)
            driver.advance(to: 2000)
            driver.answer(token(2), .available)
        }
        driver.submit()
        #expect(driver.take().last.map { if case .register = $0 { true } else { false } } == true)
        return driver
    }
}
