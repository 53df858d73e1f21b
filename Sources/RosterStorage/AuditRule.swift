/// When a write's audit entry is written, and whom it names: the rule every backend follows, written once.
/// The entry commits in the write's own transaction only when the write changed something (`happened` of the
/// write's value: the account was there, the code was unused, the token was live); an entry that names no one
/// is named as the account the write found (`naming`), since the caller may know the account only from the
/// answer (a resume). A nil entry writes none.
public struct AuditRule<Value>: Sendable {
    /// Whether the write's value says it changed something.
    public let happened: @Sendable (Value) -> Bool
    /// The username an entry that names no one is given.
    public let naming: @Sendable (Value) -> String?

    public init(happened: @escaping @Sendable (Value) -> Bool,
                naming: @escaping @Sendable (Value) -> String? = { _ in nil }) {
        self.happened = happened
        self.naming = naming
    }

    /// The entry to commit with a write that answered `value`, or nil for none.
    public func entry(_ audit: AuditRecord?, after value: Value) -> AuditRecord? {
        guard let audit, happened(value) else { return nil }
        return audit.named(naming(value))
    }
}

extension AuditRecord {
    /// This entry, named as `username` when it names no one: how an entry is named as the account a write found,
    /// also by a backend whose own statement decided whether it happened (PostgreSQL).
    public func named(_ username: String?) -> AuditRecord {
        var named = self
        if named.username == nil { named.username = username }
        return named
    }
}

extension AuditRule {
    /// Every write that succeeded changed something (a registration, a log-in's token, recorded failures).
    public static var always: AuditRule { AuditRule(happened: { _ in true }) }
}

extension AuditRule where Value == Bool {
    /// The write answers whether it changed something (a revoked token, a confirmed TOTP, a lock).
    public static var whenTrue: AuditRule { AuditRule(happened: { $0 }) }
}

extension AuditRule {
    /// The write answers nil when it found nothing to change (an account gone, no such unused code).
    public static func whenFound<Wrapped>() -> AuditRule where Value == Wrapped? {
        AuditRule(happened: { $0 != nil })
    }
}

extension AuditRule where Value == Account? {
    /// A resume: an entry only when an unlocked account resumed, named as that account.
    public static var resumed: AuditRule {
        AuditRule(happened: { $0?.locked == false }, naming: { $0?.username })
    }
}
