/// Every way a request can fail. `reason` is stable API: clients switch on it, whatever the locale.
public enum RosterError: Error, Equatable, Sendable {
    /// The line was not JSON.
    case parseError
    /// The line was JSON but not a request object; `problem` is a stable code for what is wrong with it
    /// (`batch_unsupported`, `not_an_object`, `invalid_id`, `invalid_version`, `missing_method`,
    /// `invalid_method`, `unknown_member`).
    case invalidRequest(problem: String)
    /// The line exceeded the framer's limit and was discarded.
    case requestTooLarge(limit: Int)
    case methodNotFound(method: String)
    /// A param is missing, of the wrong type, out of range, or not known to the method.
    case invalidParams(param: String, problem: ParamProblem)
    case unauthenticated
    case forbidden
    case unknownForm(form: String)
    case unknownField(form: String, field: String)
    case formNotOpen(form: String)
    case fieldDisabled(form: String, field: String)
    case notSubmittable(form: String)
    /// A field's own rule refused a value outside a form (e.g. `users.register`); `code` is the rule's reason.
    case invalidField(field: String, code: String)
    case taken(field: String)
    case notFound
    case wrongPassword
    case invalidCredentials
    /// An administrator locked the account (protocol.md "Administering users"): log-in, resume and recovery are refused until unlocked.
    case locked
    /// The password was right and the account needs its one-time (TOTP) code (protocol.md "Log-in with TOTP, step by step").
    case codeRequired
    /// `code_required` after a passkey that did not verify the user: the passkey was right, the code is still owed
    /// (protocol.md "Passkeys"); worded for a passkey, not a password.
    case passkeyNeedsCode
    /// `invalid_credentials` for a passkey this daemon holds for nobody (removed, or never registered here).
    case unknownPasskey
    /// A wrong, used or expired one-time or recovery code; it counts as a failed log-in.
    case invalidCode
    /// `account.email_verify_send` for an account without an email (protocol.md §Email).
    case noEmail
    /// Mail is off: `[Mail] Sendmail=` is empty (protocol.md §Email).
    case mailUnavailable
    /// A WebAuthn response that did not verify; `why` names the check (protocol.md "Passkeys").
    case passkeyRejected(why: String)
    /// A contact changed since the etag the client sent, or exists where it sent If-None-Match: * (contacts).
    case preconditionFailed
    case rateLimited(retryAfterMs: Int64)
    case busy(retryAfterMs: Int64)
    /// An answer of `size` bytes did not fit what the connection may hold (`limit` bytes); it was replaced by this
    /// error. The request itself was carried out: only its answer was not sent.
    case answerTooLarge(size: Int, limit: Int)
    case storageFull
    /// The database cannot be reached (a server that is down or restarting); nothing was stored, and asking
    /// again after `retryAfterMs` may work.
    case storageUnavailable(retryAfterMs: Int64)
    case `internal`

    /// The stable snake_case name of this failure, sent as `data.reason`.
    public var reason: String {
        switch self {
        case .parseError: "parse_error"
        case .invalidRequest: "invalid_request"
        case .requestTooLarge: "request_too_large"
        case .methodNotFound: "method_not_found"
        case .invalidParams(_, let problem): problem.rawValue
        case .unauthenticated: "unauthenticated"
        case .forbidden: "forbidden"
        case .unknownForm: "unknown_form"
        case .unknownField: "unknown_field"
        case .formNotOpen: "form_not_open"
        case .fieldDisabled: "field_disabled"
        case .notSubmittable: "not_submittable"
        case .invalidField(_, let code): code
        case .taken: "taken"
        case .notFound: "not_found"
        case .wrongPassword: "wrong_password"
        case .invalidCredentials: "invalid_credentials"
        case .locked: "locked"
        case .codeRequired, .passkeyNeedsCode: "code_required"
        case .unknownPasskey: "invalid_credentials"
        case .invalidCode: "invalid_code"
        case .noEmail: "no_email"
        case .mailUnavailable: "mail_unavailable"
        case .passkeyRejected: "passkey_rejected"
        case .preconditionFailed: "precondition_failed"
        case .rateLimited: "rate_limited"
        case .busy: "busy"
        case .answerTooLarge: "answer_too_large"
        case .storageFull: "storage_full"
        case .storageUnavailable: "storage_unavailable"
        case .internal: "internal"
        }
    }

    /// Extra `data` members beside `reason`, so a client need not parse the message.
    public var details: [(key: String, value: ErrorDetail)] {
        switch self {
        case .parseError, .unauthenticated, .forbidden, .notFound, .wrongPassword, .invalidCredentials, .locked,
             .codeRequired, .passkeyNeedsCode, .unknownPasskey, .invalidCode, .noEmail, .mailUnavailable, .preconditionFailed, .storageFull,
             .internal:
            []
        case .invalidRequest(let problem): [("problem", .string(problem))]
        case .requestTooLarge(let limit): [("limit", .int(Int64(limit)))]
        case .methodNotFound(let method): [("method", .string(method))]
        case .invalidParams(let param, _): [("param", .string(param))]
        case .unknownForm(let form), .formNotOpen(let form), .notSubmittable(let form): [("form", .string(form))]
        case .unknownField(let form, let field), .fieldDisabled(let form, let field):
            [("form", .string(form)), ("field", .string(field))]
        case .invalidField(let field, _), .taken(let field): [("field", .string(field))]
        case .rateLimited(let ms), .busy(let ms), .storageUnavailable(let ms): [("retry_after_ms", .int(ms))]
        case .answerTooLarge(let size, let limit): [("size", .int(Int64(size))), ("limit", .int(Int64(limit)))]
        case .passkeyRejected(let why): [("why", .string(why))]
        }
    }

    /// The values a message template may quote: every detail, by key.
    public var messageArguments: [String: String] {
        var arguments: [String: String] = [:]
        for (key, value) in details {
            switch value {
            case .string(let text): arguments[key] = text
            case .int(let number): arguments[key] = String(number)
            }
        }
        return arguments
    }
}

/// A detail value of an error's `data`.
public enum ErrorDetail: Equatable, Sendable {
    case string(String)
    case int(Int64)
}

/// What is wrong with a param; the raw value is the error's `reason`.
public enum ParamProblem: String, Sendable, CaseIterable {
    case missing = "missing_param"
    case wrongType = "wrong_type"
    case outOfRange = "out_of_range"
    case unknown = "unknown_param"
    case unsupportedLocale = "unsupported_locale"
    /// `admin.backup`: something exists at the path; a backup never replaces a file.
    case targetExists = "target_exists"
    /// `admin.backup`: the path names a directory, a device or another special file.
    case notARegularFile = "not_a_regular_file"
    /// `admin.backup`: the path is the live database or one of its files.
    case liveDatabase = "live_database"
    /// `admin.backup`: the path's directory is missing or no file can be created in it.
    case badDirectory = "bad_directory"
    /// A time param that is no RFC 3339 time (`admin.audit` `since`).
    case notATime = "not_a_time"
    /// `session.hello` `remote` that is no IPv4 or IPv6 address literal (see `RemoteAddress`).
    case notAnAddress = "not_an_address"
    /// Free text longer than its cap in Unicode scalars (`session.hello` `client`, `admin.users.lock` `reason`;
    /// see `FreeText`).
    case tooLong = "too_long"
    /// Free text holding a control character (C0, C1, DEL), a line separator or a bidi control (see `FreeText`).
    case controlCharacter = "control_character"
    /// `passkey.register_finish`: the account holds as many passkeys as it may (`PasskeyLimits.perAccount`).
    case tooManyPasskeys = "too_many_passkeys"
    /// `auth.passkey_finish` with a `code` and no `credential` while no verified passkey awaits its code.
    case noPendingPasskey = "no_pending_passkey"
    /// A contact uid that is empty, longer than 255 bytes, or holds a control character or `/` (`ContactUID`).
    case invalidUID = "invalid_uid"
    /// `contacts.changes` `since` older than the removals still kept: sync from scratch (no `since`).
    case tokenExpired = "token_expired"
    /// `contacts.changes` `since` that is no change token.
    case invalidToken = "invalid_token"
    // A card `contacts.put_vcard` refuses (see `VCard.read(card:)`): its own reasons, then the import's.
    case cardTooLarge = "card_too_large"
    case oneCardRequired = "one_card_required"
    case unsupportedVersion = "unsupported_version"
    case unexpectedLine = "unexpected_line"
    case malformedLine = "malformed_line"
    case missingEnd = "missing_end"
    case nameRequired = "name_required"
    case nameTooLong = "name_too_long"
    case invalidPhone = "invalid_phone"
    case invalidEmail = "invalid_email"
    case noteTooLong = "note_too_long"
    /// `account.app_password_create`: the account holds as many app passwords as it may
    /// (`AppPasswordLimits.perAccount`).
    case tooManyAppPasswords = "too_many_app_passwords"
}

extension ParamProblem {
    /// The reason a free text param's refusal answers with.
    public init(_ problem: FreeText.Problem) {
        switch problem {
        case .tooLong: self = .tooLong
        case .controlCharacter: self = .controlCharacter
        }
    }
}

extension RosterError {
    /// `invalid_params` for `param` when its free text is refused (too long in Unicode scalars, or holding a
    /// control or bidi character); nil when it may be stored.
    public static func refusedFreeText(_ text: String, param: String, maxLength: Int) -> RosterError? {
        FreeText.problem(text, maxLength: maxLength).map { .invalidParams(param: param, problem: ParamProblem($0)) }
    }
}

extension RosterError: CustomStringConvertible {
    /// Safe to log: details name params and fields, never their values.
    public var description: String {
        let arguments = messageArguments
        let extra = details.map { "\($0.key)=\(arguments[$0.key] ?? "")" }.joined(separator: " ")
        return extra.isEmpty ? reason : "\(reason) \(extra)"
    }
}
