/// The `[Audit]` settings: how the audit log (contract §9) is kept. A reload applies them.
public struct AuditSettings: Equatable, Sendable {
    /// `FailedLoginEntriesPerMinute=`: one peer uid's failed-log-in entries written per minute; the rest are
    /// counted as `suppressed` (see `FailedLoginEntryCap`).
    public var failedLoginEntriesPerMinute: Int

    public init(failedLoginEntriesPerMinute: Int = 10) {
        self.failedLoginEntriesPerMinute = failedLoginEntriesPerMinute
    }
}
