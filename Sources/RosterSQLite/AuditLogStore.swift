import RosterStorage

/// The audit log in `audit_log`. An entry for a change is appended inside that change's transaction
/// (`Database.enclosingTransaction`); rows are read newest first (by id) and deleted only by pruning, by time.
public struct AuditLogStore {
    /// The connection this store uses; see `Database`: it belongs to one thread.
    public let database: Database

    /// A store over `database`, whose schema must already be migrated.
    public init(database: Database) {
        self.database = database
    }

    static let columns = "id, time_ms, event, username, peer_uid, peer_pid, client, outcome, reason, suppressed, remote, method"

    /// A batch of old entries, found through the time index (any of them: all go in the end).
    static let pruneSQL = "DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE time_ms < ? LIMIT ?)"

    /// Appends `record` at `now`, in the caller's transaction when one is open; the entry as stored.
    public func append(_ record: AuditRecord, at now: Int64) throws(StoreError) -> AuditEntry {
        let insert = try database.cached("""
            INSERT INTO audit_log(time_ms, event, username, peer_uid, peer_pid, client, outcome, reason, suppressed, remote,
                                  method)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        do {
            try insert.bind(Array(Self.values(AuditEntry(id: 0, timeMs: now, record: record)).dropFirst()))
            try insert.run()
        } catch {
            throw error.relabelled("append audit entry")
        }
        return AuditEntry(id: database.lastInsertRowID, timeMs: now, record: record)
    }

    /// The entries that match `query`, newest first, at most `query.limit`. Only the filters that are set are in
    /// the SQL, so each shape of query gets the index that suits it.
    public func entries(_ query: AuditQuery) throws(StoreError) -> [AuditEntry] {
        var conditions: [String] = []
        var values: [SQLValue] = []
        if let username = query.username {
            conditions.append("username = ?")
            values.append(.text(username))
        }
        if let event = query.event {
            conditions.append("event = ?")
            values.append(.text(event.rawValue))
        }
        if let since = query.sinceMs {
            conditions.append("time_ms >= ?")
            values.append(.integer(since))
        }
        if let before = query.beforeID {
            conditions.append("id < ?")
            values.append(.integer(before))
        }
        values.append(.integer(Int64(max(0, query.limit))))
        let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        // Prepared afresh: sixteen shapes of an administrator's query would crowd the hot paths out of the cache.
        let select = try database.prepare("SELECT \(Self.columns) FROM audit_log\(filter) ORDER BY id DESC LIMIT ?")
        do {
            try select.bind(values)
            var entries: [AuditEntry] = []
            while try select.step() { entries.append(try Self.entry(select)) }
            return entries
        } catch {
            throw error.relabelled("read audit entries")
        }
    }

    /// Deletes up to `limit` of the oldest entries written before `beforeMs`; how many went. Pruning a long log
    /// takes several calls, each a short transaction, so other writers are not held up behind one large delete.
    public func prune(before beforeMs: Int64, limit: Int) throws(StoreError) -> Int {
        let delete = try database.cached(Self.pruneSQL)
        do {
            try delete.bind(beforeMs, at: 1)
            try delete.bind(limit, at: 2)
            try delete.run()
            return database.changes
        } catch {
            throw error.relabelled("prune audit entries")
        }
    }

    /// Stores copied entries with their ids and times as they were (`rosterd --copy-database`).
    public func insertCopied(_ entries: [AuditEntry]) throws(StoreError) {
        let insert = try database.cached("INSERT INTO audit_log(\(Self.columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        do {
            for entry in entries {
                try insert.bind(Self.values(entry))
                try insert.run()
            }
        } catch {
            throw error.relabelled("copy audit entries")
        }
    }

    /// The row of `columns` at the statement's current position. A method whose text this rosterd does not know
    /// (a newer one's) reads as none, so that the entry itself is still read.
    static func entry(_ row: Statement) throws(StoreError) -> AuditEntry {
        guard let eventText = row.string(at: 2), let event = AuditEvent(rawValue: eventText),
              let outcome = row.string(at: 7).flatMap(AuditOutcome.init(rawValue:)),
              let uid = UInt32(exactly: row.int64(at: 4)), let pid = Int32(exactly: row.int64(at: 5)) else {
            throw .unreadableValue(operation: "read audit entry")
        }
        let peer = AuditPeer(uid: uid, pid: pid, client: row.string(at: 6), remote: row.string(at: 10))
        return AuditEntry(id: row.int64(at: 0), timeMs: row.int64(at: 1), record: AuditRecord(
            event: event, username: row.string(at: 3), peer: peer, outcome: outcome, reason: row.string(at: 8),
            suppressed: row.int(at: 9), method: row.string(at: 11).flatMap(LoginMethod.init(rawValue:))))
    }

    /// `entry` as the values of `columns`, in order.
    private static func values(_ entry: AuditEntry) -> [SQLValue] {
        let record = entry.record
        return [.integer(entry.id), .integer(entry.timeMs), .text(record.event.rawValue),
                record.username.map(SQLValue.text) ?? .null, .integer(Int64(record.peer.uid)),
                .integer(Int64(record.peer.pid)), record.peer.client.map(SQLValue.text) ?? .null,
                .text(record.outcome.rawValue), record.reason.map(SQLValue.text) ?? .null,
                .integer(Int64(record.suppressed)), record.peer.remote.map(SQLValue.text) ?? .null,
                record.method.map { .text($0.rawValue) } ?? .null]
    }
}
