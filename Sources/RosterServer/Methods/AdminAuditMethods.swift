import RosterCore
import RosterRuntime
import RosterProtocol
import RosterStorage

/// What `admin.audit` needs beyond the storage and the account procedures: who is an administrator, the
/// `[Audit]` settings in force, and a way to reach a following connection. The session book; a double in a unit test.
protocol AuditDesk: AnyObject {
    associatedtype Host: CallHost
    /// Root, or the user the daemon runs as.
    func isAdmin(_ peer: PeerCredentials) -> Bool
    var auditSettings: AuditSettings { get }
    /// Whether connection `id` is still open (one that closed while its call waited must not become a follower).
    func isConnectionOpen(_ id: UInt64) -> Bool
    /// Sends `{type: "audit", entry}` to connection `id`, through its output queue and budget.
    func sendAuditEvent(_ entry: JSONValue, to id: UInt64)
    /// Sends `{type: "audit_missed", count, first_id, last_id}` to connection `id`.
    func sendAuditMissed(_ missed: MissedAuditEntries, to id: UInt64)
    /// The bytes queued for connection `id` that its peer has not read yet (0 once it is gone).
    func unsentOutputBytes(of id: UInt64) -> Int
    /// Asks for `outputDrained` once connection `id` has written all its output; `backlogBytes` is the follower
    /// backlog it passed, for the notice this leaves in the log.
    func notifyWhenDrained(_ id: UInt64, backlogBytes: Int)
}

/// `admin.audit` (protocol.md §The audit log): the log's entries newest first, filtered by user, event and time, a page at a time
/// (`before` an id); with `follow: true` every later committed entry that matches comes as an `audit` event on
/// that connection. For root and the daemon's own user only (`forbidden` otherwise, before anything is read).
///
/// RULES
///   • `username` is a username or an email; an email is resolved to the account that holds it now (`not_found`
///     when none does), a username is taken as it is, so a deleted account's entries stay findable.
///   • `follow: true` replaces the connection's filter, or makes it a follower within `[Audit] MaxFollowers=` per
///     daemon (`busy` past it); `follow: false` stops; without `follow` nothing about following changes. A call
///     that fails changes nothing either.
///   • A follower hears every entry committed from the moment its call was read, so an entry written while the
///     page is read may come both in `items` and as an event (clients drop events by id); the connection's end
///     ends the following.
///   • A follower has a backlog of its own, `followerBacklogBytes` of unread output: while it holds more, entries
///     for it are counted, not queued, and so are all later ones until its output is written out; then it hears one
///     `audit_missed` event (how many, the first and last id) before any newer entry, and reads them back with
///     `before`. The per-connection limits (8 MiB soft, 32 MiB hard) are for answers a peer asked for; sixteen
///     followers at 32 MiB each would be twice the daemon's whole output budget, spent by peers that only stopped
///     reading, and that budget pauses everyone's reads. At 1 MiB (about 3,000 entries), sixteen hold 16 MiB.
final class AdminAuditMethods<Desk: AuditDesk> {
    typealias AdminCall = RequestCall<Desk.Host>

    static var defaultLimit: Int64 { 100 }
    static var maxLimit: Int64 { 1_000 }
    /// What a refused follower is told to wait: a slot frees only when another follower stops or goes.
    static var followersBusyRetryMs: Int64 { 5_000 }
    /// A follower's unread output past which entries are missed rather than queued (see RULES): a constant, not a
    /// key, since it only trades memory for how often a slow follower reads back; a test lowers it.
    static var defaultFollowerBacklogBytes: Int { 1 << 20 }
    var followerBacklogBytes = AdminAuditMethods.defaultFollowerBacklogBytes

    private let storage: BoundStorage<any AuditStorage>
    private let accounts: AccountProcedures
    private unowned let desk: Desk
    private(set) var followers = AuditFollowers()

    init(storage: any Storage, accounts: AccountProcedures, desk: Desk) {
        self.storage = BoundStorage { storage.acting(for: $0) }
        self.accounts = accounts
        self.desk = desk
    }

    func audit(_ call: AdminCall) {
        guard call.mayAdminister(desk.isAdmin) else { return call.fail(.forbidden) }
        var sinceMs: Int64?
        if let since = call.params.string("since") {
            do throws(UTCTime.ParseFailure) {
                sinceMs = try UTCTime.unixMs(rfc3339: since)
            } catch {
                return call.fail(.invalidParams(param: "since", problem: .notATime))
            }
        }
        // The spec admitted only the event strings.
        let event = call.params.string("event").flatMap(AuditEvent.init(rawValue:))
        let limit = Int(call.params.int("limit") ?? Self.defaultLimit)
        let beforeID = call.params.int("before")
        let follow = call.params.bool("follow")
        let charge = call.connection.queueCharge
        resolve(call.params.string("username"), charge: charge) { [self] resolved in
            guard case .success(let username) = resolved else { return call.fail(resolved.failureValue ?? .internal) }
            let connection = call.connection.id
            let previous = followers.snapshot(of: connection)
            switch follow {
            case true?:
                // Closed while the email was looked up: nobody reads the answer, and a follower would never be freed.
                guard desk.isConnectionOpen(connection) else { return call.fail(.internal) }
                guard followers.follow(connection, AuditFilter(username: username, event: event),
                                       limit: desk.auditSettings.maxFollowers) else {
                    return call.fail(.busy(retryAfterMs: Self.followersBusyRetryMs))
                }
            case false?:
                followers.stop(connection)
            case nil:
                break
            }
            let query = AuditQuery(username: username, event: event, sinceMs: sinceMs, beforeID: beforeID, limit: limit)
            storage.acting(for: charge).auditEntries(query) { [self] result in
                switch result {
                case .success(let entries):
                    call.succeed(["items": .array(entries.map(Self.described))])
                case .failure(let failure):
                    if follow != nil, desk.isConnectionOpen(connection) { followers.restore(connection, previous) }
                    call.fail(failure.rosterError)
                }
            }
        }
    }

    /// Called for every committed entry, this daemon's or another's: each follower whose filter matches hears it,
    /// or, while it is behind, counts it as missed.
    func entryCommitted(_ entry: AuditEntry) {
        let hearing = followers.hearing(entry)
        guard !hearing.isEmpty else { return }
        let described = Self.described(entry)
        for connection in hearing {
            let behind = followers.isMissing(connection)
            if behind || desk.unsentOutputBytes(of: connection) > followerBacklogBytes {
                if !behind { desk.notifyWhenDrained(connection, backlogBytes: followerBacklogBytes) }
                followers.miss(entry.id, by: connection)
            } else {
                desk.sendAuditEvent(described, to: connection)
            }
        }
    }

    /// Connection `id` has written all its output: a follower that missed entries hears how many, and follows again.
    func outputDrained(_ id: UInt64) {
        guard let missed = followers.takeMissed(id) else { return }
        desk.sendAuditMissed(missed, to: id)
    }

    /// The connection is gone: its place among the followers is free.
    func connectionClosed(_ id: UInt64) {
        followers.stop(id)
    }

    /// `audit_missed`'s members on the wire.
    static func described(_ missed: MissedAuditEntries) -> [(String, JSONValue)] {
        [("count", .int(Int64(missed.count))), ("first_id", .int(missed.firstID)), ("last_id", .int(missed.lastID))]
    }

    /// The canonical username to filter by: an email becomes its account's username; nil when none was asked.
    private func resolve(_ typed: String?, charge: QueueCharge,
                         completion: @escaping (Result<String?, RosterError>) -> Void) {
        guard let typed, !typed.isEmpty else { return completion(.success(nil)) }
        let canonical = Normalization.canonicalLoginIdentifier(typed)
        guard case .email = AccountIdentifier(loginIdentifier: canonical) else { return completion(.success(canonical)) }
        accounts.summary(of: typed, charge: charge) { completion($0.map { $0.account.username }) }
    }

    /// An entry as the wire has it (`admin.audit` items and `audit` events alike).
    static func described(_ entry: AuditEntry) -> JSONValue {
        let record = entry.record
        return [
            "id": .int(entry.id),
            "time": .string(UTCTime.rfc3339(unixMs: entry.timeMs)),
            "event": .string(record.event.rawValue),
            "username": record.username.map(JSONValue.string) ?? .null,
            "peer_uid": .int(Int64(record.peer.uid)),
            "peer_pid": .int(Int64(record.peer.pid)),
            "client": record.peer.client.map(JSONValue.string) ?? .null,
            "remote": record.peer.remote.map(JSONValue.string) ?? .null,
            "outcome": .string(record.outcome.rawValue),
            "reason": record.reason.map(JSONValue.string) ?? .null,
            "suppressed": .int(Int64(record.suppressed)),
            "method": record.method.map { .string($0.rawValue) } ?? .null,
        ]
    }
}

/// The daemon's `admin.audit`, over its connections.
extension SessionBook: AuditDesk {}

extension AdminAuditMethods: MethodGroup {
    typealias Host = Desk.Host

    /// The `admin.audit` entry of the dispatcher's table.
    static var table: [MethodEntry<AdminAuditMethods>] {
        let entry: [FieldSpec] = [
            FieldSpec("id", .integer(1...Int64.max)), FieldSpec("time", .string),
            FieldSpec("event", .oneOf(AuditEvent.allCases.map(\.rawValue))),
            FieldSpec("username", .described("string or null")),
            FieldSpec("peer_uid", .integer(0...Int64(UInt32.max))), FieldSpec("peer_pid", .integer(0...Int64(Int32.max))),
            FieldSpec("client", .described("string or null")),
            FieldSpec("remote", .described("string or null")),
            FieldSpec("outcome", .oneOf(AuditOutcome.allCases.map(\.rawValue))),
            FieldSpec("reason", .described("string or null")), FieldSpec("suppressed", .integer(0...Int64.max)),
            FieldSpec("method", .described(LoginMethod.allCases.map(\.rawValue).joined(separator: ", ")
                                           + " or null (login entries only)")),
        ]
        return [
            MethodEntry(spec: MethodSpec(
                "admin.audit",
                summary: "The audit log newest first, by user (username or email), event and time (since, RFC 3339), "
                    + "a page before an id; follow: true streams later entries as audit events (admin only).",
                params: [.optional("username", .string), .optional("event", .oneOf(AuditEvent.allCases.map(\.rawValue))),
                         .optional("since", .string), .optional("before", .integer(1...Int64.max)),
                         .optional("limit", .integer(1...maxLimit)), .optional("follow", .boolean)],
                result: .object([FieldSpec("items", .array(.object(entry)))])),
                   handler: { $0.audit($1) }),
        ]
    }
}
