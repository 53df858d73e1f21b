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

/// The connections that follow the audit log (`admin.audit` `follow: true`), each with its filter, within a budget
/// per daemon. Pure: the method decides when a connection follows or stops, the server when it is gone.
struct AuditFollowers {
    private(set) var filters: [UInt64: AuditFilter] = [:]

    var count: Int { filters.count }

    func filter(of connection: UInt64) -> AuditFilter? { filters[connection] }

    /// `connection` follows with `filter` from now on, replacing its filter if it already followed; false (and
    /// nothing changed) when it did not and `limit` connections follow already.
    mutating func follow(_ connection: UInt64, _ filter: AuditFilter, limit: Int) -> Bool {
        guard filters[connection] != nil || filters.count < limit else { return false }
        filters[connection] = filter
        return true
    }

    /// Puts back what `filter(of:)` said earlier: a filter, or not following (nil).
    mutating func restore(_ connection: UInt64, _ filter: AuditFilter?) {
        filters[connection] = filter
    }

    mutating func stop(_ connection: UInt64) {
        filters[connection] = nil
    }

    /// The connections whose filter `entry` matches, in the order they connected.
    func hearing(_ entry: AuditEntry) -> [UInt64] {
        filters.filter { $0.value.matches(entry.record) }.keys.sorted()
    }
}
