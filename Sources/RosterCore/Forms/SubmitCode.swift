/// Why a submit event reads as it does; the raw value is the wire `code` and the suffix of `<form>.<code>`.
///
/// A failure's code is named by the error that caused it: each failure code's raw value is a `RosterError`
/// reason, and `failure(_:offered:)` is the one place an error becomes a submit code.
public enum SubmitCode: String, CaseIterable, Sendable {
    case running
    case succeeded
    /// Any failure without a more telling code of its own.
    case failed
    case notSubmittable = "not_submittable"
    case taken
    case notFound = "not_found"
    case wrongPassword = "wrong_password"
    case invalidCredentials = "invalid_credentials"
    /// An administrator locked the account.
    case locked
    case rateLimited = "rate_limited"
    /// The password was right and the account needs its one-time code: the login form's `code` field opens.
    case codeRequired = "code_required"
    case invalidCode = "invalid_code"
    case busy
    case storageFull = "storage_full"
    case storageUnavailable = "storage_unavailable"

    /// The code a submit that failed with `error` shows: the one keyed by the error's reason when the form offers
    /// it (has a message for it), else `failed`, the one fallback. An `invalid_field` names a field's code, not a
    /// submit's, so it is always `failed`, as it has always read.
    public static func failure(_ error: RosterError, offered: [SubmitCode]) -> SubmitCode {
        if case .invalidField = error { return .failed }
        guard let code = SubmitCode(rawValue: error.reason), offered.contains(code) else { return .failed }
        return code
    }
}
