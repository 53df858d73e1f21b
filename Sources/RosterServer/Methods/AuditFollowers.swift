import RosterStorage

/// Which audit entries a follower hears: every filter that is set must hold (as `AuditQuery`'s do).
struct AuditFilter: Equatable {
    /// A canonical username.
    var username: String?
    var event: AuditEvent?

    func matches(_ record: AuditRecord) -> Bool {
        (username == nil || record.username == username) && (event == nil || record.event == event)
    }
}

/// The entries a follower was not sent because it left too much output unread: how many, and the smallest and
/// largest id among them, so that it can read them back (`admin.audit` `before: lastID + 1`, down to `firstID`).
struct MissedAuditEntries: Equatable {
    var count: Int
    var firstID: Int64
    var lastID: Int64
}

/// The connections that follow the audit log (`admin.audit` `follow: true`), each with its filter, within a budget
/// per daemon, and what each missed while it was behind. Pure: the method decides when a connection follows,
/// stops or misses, the server when it is gone or has read its output.
struct AuditFollowers {
    private(set) var filters: [UInt64: AuditFilter] = [:]
    /// Followers behind on their output since an entry was missed: later ones are missed too until it drains.
    private var missed: [UInt64: MissedAuditEntries] = [:]

    var count: Int { filters.count }

    func filter(of connection: UInt64) -> AuditFilter? { filters[connection] }

    /// `connection` follows with `filter` from now on, replacing its filter if it already followed; false (and
    /// nothing changed) when it did not and `limit` connections follow already.
    mutating func follow(_ connection: UInt64, _ filter: AuditFilter, limit: Int) -> Bool {
        guard filters[connection] != nil || filters.count < limit else { return false }
        filters[connection] = filter
        return true
    }

    /// How a connection follows, to put back with `restore` when a call that changed it fails.
    struct Snapshot {
        fileprivate let filter: AuditFilter?
        fileprivate let missed: MissedAuditEntries?
    }

    func snapshot(of connection: UInt64) -> Snapshot { Snapshot(filter: filters[connection], missed: missed[connection]) }

    /// Puts back what `snapshot(of:)` said earlier: a filter and what was missed, or not following.
    mutating func restore(_ connection: UInt64, _ snapshot: Snapshot) {
        filters[connection] = snapshot.filter
        missed[connection] = snapshot.missed
    }

    /// `connection` follows no more; what it missed is forgotten with it.
    mutating func stop(_ connection: UInt64) {
        filters[connection] = nil
        missed[connection] = nil
    }

    /// The connections whose filter `entry` matches, in the order they connected.
    func hearing(_ entry: AuditEntry) -> [UInt64] {
        filters.filter { $0.value.matches(entry.record) }.keys.sorted()
    }

    /// Whether `connection` has missed entries it was not told of yet.
    func isMissing(_ connection: UInt64) -> Bool { missed[connection] != nil }

    /// Entry `id` was not sent to `connection`.
    mutating func miss(_ id: Int64, by connection: UInt64) {
        guard var run = missed[connection] else {
            missed[connection] = MissedAuditEntries(count: 1, firstID: id, lastID: id)
            return
        }
        run.count += 1
        run.firstID = min(run.firstID, id)
        run.lastID = max(run.lastID, id)
        missed[connection] = run
    }

    /// What `connection` missed, once: it is told now, and hears every entry again from here on.
    mutating func takeMissed(_ connection: UInt64) -> MissedAuditEntries? {
        missed.removeValue(forKey: connection)
    }
}
