import Testing
@testable import RosterCore

@Suite("Message catalog")
struct MessageCatalogTests {
    static let errors: [RosterError] = [
        .parseError, .invalidRequest(problem: "batch_unsupported"), .invalidRequest(problem: "not_an_object"),
        .invalidRequest(problem: "invalid_id"), .invalidRequest(problem: "invalid_version"),
        .invalidRequest(problem: "missing_method"), .invalidRequest(problem: "invalid_method"),
        .invalidRequest(problem: "unknown_member"), .invalidRequest(problem: "duplicate_member"),
        .requestTooLarge(limit: 1), .methodNotFound(method: "m"), .unauthenticated, .forbidden,
        .unknownForm(form: "f"), .unknownField(form: "f", field: "x"), .formNotOpen(form: "f"),
        .fieldDisabled(form: "f", field: "x"), .notSubmittable(form: "f"), .notFound, .wrongPassword,
        .invalidCredentials, .rateLimited(retryAfterMs: 1), .busy(retryAfterMs: 1), .answerTooLarge(size: 2, limit: 1),
        .storageFull, .storageUnavailable(retryAfterMs: 1), .internal,
    ] + ParamProblem.allCases.map { .invalidParams(param: "p", problem: $0) }

    @Test(arguments: errors)
    func everyRequestErrorHasATextInEveryLocale(error: RosterError) {
        if case .invalidRequest(let problem) = error {
            #expect(MessageCatalog.contains("error.invalid_request.\(problem)"))
        } else {
            #expect(MessageCatalog.contains("error.\(error.reason)"))
        }
        for locale in RosterLocale.allCases {
            let text = MessageCatalog.message(for: error, locale: locale)
            #expect(!text.isEmpty)
            #expect(!text.contains("{"), "unfilled placeholder in \(locale): \(text)")
        }
    }

    @Test func placeholdersAreFilled() {
        #expect(MessageCatalog.message(for: .rateLimited(retryAfterMs: 1500), locale: .en)
                == "Too many attempts; try again in 1500 ms")
        #expect(MessageCatalog.message(for: .methodNotFound(method: "x.y"), locale: .zhHans) == "没有方法 x.y")
    }

    /// An outage has its own reason, code and hint in every locale, and a storage outage is what reads as it.
    @Test func anUnreachableDatabaseReadsAsStorageUnavailableWithItsHint() {
        let error = RosterError.storageUnavailable(retryAfterMs: 750)
        #expect(error.reason == "storage_unavailable")
        #expect(error.messageArguments == ["retry_after_ms": "750"])
        for locale in RosterLocale.allCases {
            #expect(MessageCatalog.message(for: error, locale: locale).contains("750"), "\(locale)")
        }
        #expect(MessageCatalog.message(for: error, locale: .en)
                == "The database cannot be reached right now; nothing was saved. Try again in 750 ms")
    }

    @Test func localeTagsMapToServedLanguages() {
        #expect(RosterLocale(tag: "zh-Hans") == .zhHans)
        #expect(RosterLocale(tag: "zh_CN.UTF-8") == .zhHans)
        #expect(RosterLocale(tag: "en_US.UTF-8") == .en)
        #expect(RosterLocale(tag: "vi-VN") == .vi)
        #expect(RosterLocale(tag: "KO") == .ko)
        #expect(RosterLocale(tag: "zh-Hant-TW") == nil)
        #expect(RosterLocale(tag: "fr") == nil)
        #expect(RosterLocale(tag: "") == nil)
    }

    @Test func errorDescriptionsNameParamsButNeverValues() {
        #expect(RosterError.invalidParams(param: "password", problem: .wrongType).description == "wrong_type param=password")
    }
}
