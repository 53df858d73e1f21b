/// The `[Audit]` settings: how long the audit log keeps its entries, how many administrator connections may
/// follow it live, and how many failed-log-in entries one peer writes a minute. A reload applies them: the next
/// prune keeps the new span, the next `admin.audit {follow: true}` meets the new budget (connections already
/// following go on), and the cap's next decision counts against the new limit.
public struct AuditSettings: Equatable, Sendable {
    /// `RetentionDays=`'s range: a day at least, a hundred years at most (past that, milliseconds still fit, but
    /// nobody means it).
    public static let retentionDaysRange = 1...36_500
    /// `MaxFollowers=`'s range.
    public static let maxFollowersRange = 1...1_000_000

    /// Entries older than this many days are pruned (90 unless configured).
    public var retentionDays: Int
    /// Connections following the log at once (`admin.audit` `follow: true`), per daemon; past it, `busy`.
    public var maxFollowers: Int
    /// `FailedLoginEntriesPerMinute=`: one requester's failed-log-in entries on no account (an unknown name)
    /// written per minute; the rest are counted as `suppressed` (see `FailedLoginEntryCap`, which folds those on
    /// real accounts apart).
    public var failedLoginEntriesPerMinute: Int

    public init(retentionDays: Int = 90, maxFollowers: Int = 16, failedLoginEntriesPerMinute: Int = 10) {
        self.retentionDays = retentionDays
        self.maxFollowers = maxFollowers
        self.failedLoginEntriesPerMinute = failedLoginEntriesPerMinute
    }

    /// The oldest time an entry may have and stay, at `nowMs` (Unix milliseconds).
    public func retainedSinceMs(nowMs: Int64) -> Int64 {
        nowMs - Int64(retentionDays) * 86_400_000
    }
}
