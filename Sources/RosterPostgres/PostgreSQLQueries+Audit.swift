import RosterCore
import RosterStorage

/// A write's audit entry as its statement inserts it: the record as stored, and the bound parts of the payload
/// that announces it (`AuditNotification`).
struct AuditWrite: Sendable {
    let record: AuditRecord
    let payload: (head: String, tail: String)

    /// `record` as `origin` writes it; `announcedByID` when the statement completes it (a resume names its
    /// account), so that the others read the row as stored rather than a payload that lacks a field.
    init(_ record: AuditRecord, origin: String, announcedByID: Bool = false) {
        self.record = Self.storable(record)
        payload = announcedByID ? AuditNotification.idPayload(origin: origin)
            : AuditNotification.payload(for: self.record, origin: origin)
    }

    /// PostgreSQL's text holds no NUL: one in a field (a client name, say) becomes U+FFFD, so that the entry is
    /// written with the rest of it, and neither the write it records nor a copy of the log fails for it (a peer
    /// could otherwise make every log-in, or every copy into PostgreSQL, fail with one crafted client name).
    static func storable(_ record: AuditRecord) -> AuditRecord {
        var stored = record
        stored.username = record.username.map(storable)
        stored.peer.client = record.peer.client.map(storable)
        stored.reason = record.reason.map(storable)
        stored.peer.remote = record.peer.remote.map(storable)
        return stored
    }

    private static func storable(_ text: String) -> String {
        PGText.storable(text) ? text : text.replacingOccurrences(of: "\u{0}", with: "\u{FFFD}")
    }
}

// The audit log's statements (protocol.md §The audit log). A write's entry is inserted by the write's own statement, in a CTE named
// `audited` that reads the rows the change made (or a condition on them), so it commits exactly when the change
// does; its RETURNING sends the announcement in the same transaction. Every audited statement ends each of its rows
// with the entry's id and time (NULL when no entry was written), read back by `PGRow.auditStamp`.
extension PostgreSQLQueries {
    /// The columns of an entry, as `PGRow.auditEntry` reads them.
    static let auditColumns = "id, time_ms, event, username, peer_uid, peer_pid, client, outcome, reason, suppressed, remote, method"

    /// When an entry is stamped: a column of the statement's own clock, or a now of its own.
    enum AuditTime {
        /// An expression the statement computed its own now as (`clock.ms`), in scope in `source`.
        case column(String)
        /// The statement stamps no time of its own: this clock reading (or NULL, the database's clock).
        case now(PGValue)
    }

    /// The CTE `audited (id, time_ms)`: inserts `write`'s entry once for the one row `source` yields (a FROM and
    /// WHERE clause that yields a row exactly when the change happened, or "" for always), and announces it. With
    /// no entry, a CTE of no row, so that the statement reads alike either way. Its parameters go after `params`.
    /// `username`, when given, is an expression in scope in `source` that names the entry when its record names
    /// no one.
    static func audited(_ write: AuditWrite?, time: AuditTime, source: String, username: String? = nil,
                        params: inout [PGValue]) -> String {
        guard let write else { return "audited AS (SELECT NULL::bigint AS id, NULL::bigint AS time_ms WHERE false)" }
        return "audited AS (\(insertAudit(write, time: time, source: source, username: username, params: &params)))"
    }

    /// An entry on its own (`appendAudit`): one row, its id and time.
    static func appendAudit(_ write: AuditWrite, now: PGValue) -> PGStatement {
        var params: [PGValue] = []
        let sql = insertAudit(write, time: .now(now), source: "", params: &params)
        return PGStatement(sql, params)
    }

    /// An entry's fields as a statement binds them, in this order, of these types: the event, username, peer's
    /// uid, pid and client, outcome, reason, suppressed count, the announcement's head and tail, the remote, and
    /// the log-in's method.
    static func auditValues(_ write: AuditWrite) -> [PGValue] {
        let record = write.record
        return [.text(record.event.rawValue), .optional(record.username), .int(Int64(record.peer.uid)),
                .int(Int64(record.peer.pid)), .optional(record.peer.client), .text(record.outcome.rawValue),
                .optional(record.reason), .int(Int64(record.suppressed)), .text(write.payload.head),
                .text(write.payload.tail), .optional(record.peer.remote), .optional(record.method?.rawValue)]
    }

    /// The types of `auditValues`, in its order.
    static let auditValueTypes = ["text", "text", "bigint", "integer", "text", "text", "text", "bigint", "text", "text",
                                  "text", "text"]

    /// The INSERT of an entry for the one row `source` yields, announcing it; its rows end with the id and time.
    static func insertAudit(_ write: AuditWrite, time: AuditTime, source: String, username: String? = nil,
                            params: inout [PGValue]) -> String {
        let first = params.count + 1
        params += auditValues(write)
        let stamp: String
        switch time {
        case .column(let expression):
            stamp = expression
        case .now(let now):
            params.append(now)
            stamp = Self.now(first + auditValueTypes.count)
        }
        let p = { (offset: Int) in "$\(first + offset)" }
        return """
            INSERT INTO audit_log(event, username, peer_uid, peer_pid, client, outcome, reason, suppressed, remote, method,
                    time_ms)
                SELECT \(p(0))::text, \(username.map { "COALESCE(\(p(1))::text, \($0))" } ?? "\(p(1))::text"), \(p(2))::bigint, \(p(3))::integer, \(p(4))::text, \(p(5))::text,
                    \(p(6))::text, \(p(7))::bigint, \(p(10))::text, \(p(11))::text, \(stamp)
                \(source)
                RETURNING pg_notify('\(ChangeNotification.channel)', \(p(8))::text || id || ' ' || time_ms || \(p(9))::text),
                    id, time_ms
            """
    }

    /// Entries that match, newest first: only the filters that are set are in the statement, so each uses its index.
    static func auditEntries(_ query: AuditQuery) -> PGStatement {
        var conditions: [String] = []
        var params: [PGValue] = []
        func bind(_ value: PGValue, _ type: String) -> String {
            params.append(value)
            return "$\(params.count)::\(type)"
        }
        if let username = query.username {
            conditions.append("\(PostgreSQLSchema.auditUsernameKey) = \(bind(.text(UsernameKey.folded(username)), "text"))")
        }
        if let event = query.event { conditions.append("event = \(bind(.text(event.rawValue), "text"))") }
        if let since = query.sinceMs { conditions.append("time_ms >= \(bind(.int(since), "bigint"))") }
        if let before = query.beforeID { conditions.append("id < \(bind(.int(before), "bigint"))") }
        let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        let limit = bind(.int(Int64(max(0, query.limit))), "bigint")
        return PGStatement("SELECT \(auditColumns) FROM audit_log \(filter) ORDER BY id DESC LIMIT \(limit)", params)
    }

    static func auditEntry(_ id: Int64) -> PGStatement {
        PGStatement("SELECT \(auditColumns) FROM audit_log WHERE id = $1::bigint", [.int(id)])
    }

    /// Deletes at most `limit` of the oldest entries before `beforeMs`: a prune of months of entries goes in short
    /// statements, none near `statement_timeout` and none holding its locks for long.
    static func pruneAudit(before beforeMs: Int64, limit: Int) -> PGStatement {
        PGStatement("""
            DELETE FROM audit_log WHERE id IN (
                SELECT id FROM audit_log WHERE time_ms < $1::bigint ORDER BY time_ms LIMIT $2::bigint)
            """, [.int(beforeMs), .int(Int64(limit))])
    }
}

extension PGRow {
    /// The id and time an audited statement ended this row with; nil when it wrote no entry.
    var auditStamp: (id: Int64, timeMs: Int64)? {
        guard cells.count >= 2, let id = int(cells.count - 2), let time = int(cells.count - 1) else { return nil }
        return (id, time)
    }

    /// An entry from `PostgreSQLQueries.auditColumns`; nil for a row this rosterd cannot read (an event a newer
    /// one added). A method it does not know (a newer one's) reads as none: the entry is still read.
    func auditEntry() -> AuditEntry? {
        guard let id = int(0), let time = int(1), let event = text(2).flatMap(AuditEvent.init(rawValue:)),
              let uid = int(4).flatMap(UInt32.init(exactly:)), let pid = int(5).flatMap(Int32.init(exactly:)),
              let outcome = text(7).flatMap(AuditOutcome.init(rawValue:)), let suppressed = int(9) else { return nil }
        let peer = AuditPeer(uid: uid, pid: pid, client: text(6), remote: text(10))
        let record = AuditRecord(event: event, username: text(3), peer: peer, outcome: outcome, reason: text(8),
                                 suppressed: Int(clamping: suppressed), method: text(11).flatMap(LoginMethod.init(rawValue:)))
        return AuditEntry(id: id, timeMs: time, record: record)
    }
}
