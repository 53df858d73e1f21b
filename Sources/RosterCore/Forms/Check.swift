/// A question only the runtime can answer: the store for existence, libpwquality for password quality.
public enum Check: Equatable, Sendable {
    /// Is this canonical (PRECIS) username registered? Answer `.available` or `.taken`.
    case usernameAvailable(canonical: String)
    /// Is this email (lower-cased, NFC) registered? Answer `.available` or `.taken`.
    case emailAvailable(canonical: String)
    /// Log-in: does an account with this canonical username or email exist? Answer `.exists` or `.missing`.
    case accountExists(canonical: String)
    /// Hardened preset: libpwquality on the normalized password. Answer `.qualityPassed` or `.qualityFailed`.
    case passwordQuality(password: Secret, username: String)

    /// Whether the user database answers it (microseconds, may run on the loop) rather than libpwquality
    /// (CPU work for the worker pool). Every check shows `validating` while it runs.
    public var needsDatabase: Bool {
        switch self {
        case .usernameAvailable, .emailAvailable, .accountExists: true
        case .passwordQuality: false
        }
    }

    /// Whether the answer may differ now that the account with this canonical username and email is gone.
    public func concerns(username: String, email: String?) -> Bool {
        switch self {
        case .usernameAvailable(let canonical): canonical == username
        case .emailAvailable(let canonical): email == canonical
        case .accountExists(let canonical): canonical == username || email == canonical
        case .passwordQuality: false
        }
    }

    /// The verdict an answer means for the field that asked; an answer of the wrong kind reads as a failed check.
    public func verdict(for result: CheckResult) -> FieldVerdict {
        switch (self, result) {
        case (_, .failed): .invalid(.checkFailed)
        case (.usernameAvailable, .available): .valid(.available)
        case (.usernameAvailable, .taken): .invalid(.taken)
        case (.emailAvailable, .available): .valid(.valid)
        case (.emailAvailable, .taken): .invalid(.taken)
        case (.accountExists, .exists): LoginRules.verdict(exists: true)
        case (.accountExists, .missing): LoginRules.verdict(exists: false)
        case (.passwordQuality, .qualityPassed): .valid(.valid)
        case (.passwordQuality, .qualityFailed(let reason)): .invalid(FieldCode.quality(reason))
        case (.usernameAvailable, _), (.emailAvailable, _), (.accountExists, _), (.passwordQuality, _):
            .invalid(.checkFailed)
        }
    }
}

/// The runtime's answer to a `Check`.
public enum CheckResult: Equatable, Sendable {
    case available
    case taken
    case exists
    case missing
    case qualityPassed
    /// `reason` is one of `FieldCode.qualityCodes`' raw values; anything else reads as `weak`.
    case qualityFailed(reason: String)
    /// The store or checker failed; the field shows `check_failed` rather than a guess.
    case failed
}

/// What may have changed in the store under the verdicts a form shows, as another daemon's writes reach this one:
/// the fields whose checks it concerns are asked again.
public enum StoreChange: Equatable, Sendable {
    /// The account with this canonical username and email was deleted: its name and email are free again.
    case accountRemoved(username: String, email: String?)
    /// Changes may have been missed: every answer the store gave may be out of date.
    case anything

    /// Whether `check`'s answer may be out of date after this change.
    public func concerns(_ check: Check) -> Bool {
        guard check.needsDatabase else { return false }
        switch self {
        case .accountRemoved(let username, let email): return check.concerns(username: username, email: email)
        case .anything: return true
        }
    }
}
