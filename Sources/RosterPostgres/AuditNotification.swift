import RosterStorage

/// How a committed audit entry is announced to the other daemons of a database, on `ChangeNotification`'s channel
/// and in the same format (`1 ORIGIN KIND FIELD…`, percent-encoded text fields), and how a payload reads back.
///
/// The statement that inserts an entry sends `head || id || ' ' || time_ms || tail`: the id and time are the
/// database's, known only to the insert, and the rest is bound. Kinds:
/// - `audit ID TIME EVENT USERNAME PEER_UID PEER_PID CLIENT OUTCOME REASON SUPPRESSED [REMOTE [METHOD]]`: the whole
///   entry. A text field that may be absent is empty when absent and `=` then the value when present, so an empty
///   value stays one. REMOTE (the address a gateway spoke for) is there only when the entry has one or a METHOD
///   follows it (then empty when the entry has none); METHOD (how a `login` entry's log-in was proved) only when
///   the entry has one. So a rosterd from before either, still running on the database while others are
///   upgraded, reads every entry without them as it did (one with them it does not understand: it warns and that
///   entry is not followed there, though it is in the log). A METHOD this rosterd does not know (a newer one's)
///   reads as none, as it does from a row.
/// - `audit-id ID TIME`: only the id, when the whole entry would not fit in a payload (under 8,000 bytes); the
///   listener reads the row. A username is at most 64 characters and a lock's reason 200 (what the server
///   accepts), but `session.hello`'s client name is bounded only by the line limit.
public enum AuditNotification {
    /// PostgreSQL refuses a payload of 8,000 bytes or more, and a refused `pg_notify` fails the write with it.
    public static let maxPayloadBytes = 7_999
    /// The most the id (a positive bigint), the space and the time (a bigint) add between head and tail.
    static let stampBytes = 19 + 1 + 20

    /// What a payload announces.
    public enum Heard: Equatable, Sendable {
        /// The whole entry.
        case entry(AuditEntry)
        /// An entry too large for a payload: read row `id`.
        case stored(id: Int64)
    }

    /// The bound parts of the payload announcing `record` from `origin`: the whole entry when it fits, else its id.
    public static func payload(for record: AuditRecord, origin: String) -> (head: String, tail: String) {
        let head = ["1", origin, "audit", ""].joined(separator: " ")
        let tail = " " + fields(record).joined(separator: " ")
        guard head.utf8.count + stampBytes + tail.utf8.count <= maxPayloadBytes else { return idPayload(origin: origin) }
        return (head, tail)
    }

    /// The bound parts of a payload announcing an entry by its id only (its row is read by the daemons that hear it).
    public static func idPayload(origin: String) -> (head: String, tail: String) {
        (["1", origin, "audit-id", ""].joined(separator: " "), "")
    }

    /// Whether `payload` is an audit announcement (of either kind), to be read by `parse`.
    public static func isAudit(_ payload: String) -> Bool {
        let fields = payload.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
        return fields.count >= 3 && fields[0] == "1" && (fields[2] == "audit" || fields[2] == "audit-id")
    }

    /// Reads a payload written through `payload(for:origin:)`.
    public static func parse(_ payload: String) throws(ChangeNotification.ParseFailure) -> (origin: String, heard: Heard) {
        let fields = payload.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        guard fields.first == "1" else { throw .unknownVersion }
        guard fields.count >= 5, !fields[1].isEmpty, let id = Int64(fields[3]), let timeMs = Int64(fields[4]) else {
            throw .malformed
        }
        switch fields[2] {
        case "audit-id":
            guard fields.count == 5 else { throw .malformed }
            return (fields[1], .stored(id: id))
        case "audit":
            // REMOTE is required when it ends the payload, and may be empty when METHOD follows it.
            let remote: String?? = switch fields.count {
            case 14: required(fields[13]).map(Optional.some)
            case 15: optional(fields[13])
            default: .some(nil)
            }
            guard (13...15).contains(fields.count), let event = AuditEvent(rawValue: fields[5]),
                  let username = optional(fields[6]), let uid = UInt32(fields[7]), let pid = Int32(fields[8]),
                  let client = optional(fields[9]), let outcome = AuditOutcome(rawValue: fields[10]),
                  let reason = optional(fields[11]), let suppressed = Int(fields[12]), let remote,
                  let method = fields.count == 15 ? required(fields[14]).map(Optional.some) : .some(nil) else {
                throw .malformed
            }
            let record = AuditRecord(event: event, username: username,
                                     peer: AuditPeer(uid: uid, pid: pid, client: client, remote: remote),
                                     outcome: outcome, reason: reason, suppressed: suppressed,
                                     method: method.flatMap(LoginMethod.init(rawValue:)))
            return (fields[1], .entry(AuditEntry(id: id, timeMs: timeMs, record: record)))
        default:
            throw .unknownKind(fields[2])
        }
    }

    // MARK: Fields

    private static func fields(_ record: AuditRecord) -> [String] {
        let fixed = [record.event.rawValue, optional(record.username), String(record.peer.uid), String(record.peer.pid),
                     optional(record.peer.client), record.outcome.rawValue, optional(record.reason),
                     String(record.suppressed)]
        // The trailing fields only as far as the entry has them (see the kinds above).
        if let method = record.method { return fixed + [optional(record.peer.remote), optional(method.rawValue)] }
        return fixed + (record.peer.remote.map { [optional($0)] } ?? [])
    }

    private static func optional(_ text: String?) -> String {
        text.map { "=" + ChangeNotification.encode($0) } ?? ""
    }

    /// nil when malformed; `.some(nil)` for an absent value.
    private static func optional(_ field: String) -> String?? {
        guard !field.isEmpty else { return .some(nil) }
        return required(field).map(Optional.some)
    }

    /// A present value (`=` then the value, as REMOTE is when it ends the payload, and METHOD always); nil when
    /// malformed.
    private static func required(_ field: String) -> String? {
        guard field.hasPrefix("="), let text = ChangeNotification.decode(String(field.dropFirst())) else { return nil }
        return text
    }
}
