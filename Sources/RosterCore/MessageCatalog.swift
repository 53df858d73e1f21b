/// Localized texts keyed by message key, with `{name}` placeholders filled from arguments.
///
/// Keys are `error.<reason>` for request failures and `<field>.<code>` (or `<form>.<code>`) for form verdicts,
/// so the same reason can read differently per field, as the seeds' texts do.
public enum MessageCatalog {
    /// The text for `key` in `locale`, falling back to zh-Hans and then to the key itself, so a message is never empty.
    public static func text(_ key: String, locale: RosterLocale, arguments: [String: String] = [:]) -> String {
        guard let texts = table[key] else { return key }
        let template = texts[locale] ?? texts[.zhHans] ?? key
        return fill(template, with: arguments)
    }

    /// Whether `key` has a text; tests use it to prove that every reason is translated.
    public static func contains(_ key: String) -> Bool { table[key] != nil }

    /// The text of an error as a client reads it in `error.message`.
    public static func message(for error: RosterError, locale: RosterLocale,
                               arguments extra: [String: String] = [:]) -> String {
        let arguments = error.messageArguments.merging(extra) { _, new in new }
        switch error {
        case .invalidField(let field, let code):
            let key = "\(field).\(code)"
            if !contains(key), let wording = FieldName.wording(param: field) {
                return text("\(wording.rawValue).\(code)", locale: locale, arguments: arguments)
            }
            return text(key, locale: locale, arguments: arguments)
        case .taken(let field):
            return text("\(field).taken", locale: locale, arguments: arguments)
        case .invalidRequest(let problem):
            return text("error.invalid_request.\(problem)", locale: locale, arguments: arguments)
        case .passkeyRejected(let why):
            let key = "error.passkey_rejected.\(why)"
            return text(contains(key) ? key : "error.passkey_rejected", locale: locale, arguments: arguments)
        case .passkeyNeedsCode, .unknownPasskey:
            return text("error.\(error.reason).passkey", locale: locale, arguments: arguments)
        case .parseError, .requestTooLarge, .methodNotFound, .invalidParams, .unauthenticated, .forbidden, .unknownForm,
             .unknownField, .formNotOpen, .fieldDisabled, .notSubmittable, .notFound, .wrongPassword, .invalidCredentials,
             .locked, .codeRequired, .invalidCode, .noEmail, .mailUnavailable, .preconditionFailed,
             .rateLimited, .busy, .answerTooLarge, .storageFull, .storageUnavailable, .internal:
            return text("error.\(error.reason)", locale: locale, arguments: arguments)
        }
    }

    /// Every table merged; a key must live in exactly one of them.
    private static let table: [String: [RosterLocale: String]] = {
        var merged: [String: [RosterLocale: String]] = [:]
        for part in parts {
            merged.merge(part) { _, _ in preconditionFailure("a message key is defined twice") }
        }
        return merged
    }()

    private static let parts: [[String: [RosterLocale: String]]] = [ProtocolMessages.table, FormMessages.table,
                                                                     ContactMessages.table]

    private static func fill(_ template: String, with arguments: [String: String]) -> String {
        // A byte scan: Foundation's String.contains costs more than the rest of an answer.
        guard template.utf8.contains(UInt8(ascii: "{")) else { return template }
        // One pass over the bytes: `String.replacing` per argument was a tenth of the daemon's time while
        // typing. A placeholder without an argument stays as written, as it did.
        let bytes = Array(template.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 16)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "{"),
               let close = bytes[(index + 1)...].firstIndex(of: UInt8(ascii: "}")),
               let value = arguments[String(decoding: bytes[(index + 1)..<close], as: UTF8.self)] {
                out.append(contentsOf: value.utf8)
                index = close + 1
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
