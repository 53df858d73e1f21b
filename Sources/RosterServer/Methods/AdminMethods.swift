import Glibc
import RosterCore
import RosterRuntime
import RosterProtocol
import RosterStorage

/// The server-wide figures `admin.stats` reads and who may ask for them. `ServerFigures`, for the daemon; a
/// double in a unit test.
protocol AdminFigures: AnyObject {
    associatedtype Host: CallHost
    /// Whether a peer may use `admin.*`: root, or the user the daemon runs as.
    func isAdmin(_ peer: PeerCredentials) -> Bool
    var uptime: Duration { get }
    var connectionCount: Int { get }
    /// Connections that said `session.hello`.
    var greetedSessionCount: Int { get }
    var stats: ServerStats { get }
    var hashingStats: WorkerPoolStats { get }
    var checksStats: WorkerPoolStats { get }
    /// The storage's connection state as last reported.
    var storageState: StorageState { get }
    /// Read at each backup, so that a reload's log level reaches it.
    var logger: Logger { get }
}

/// `admin.*`: for root and the daemon's own user only, checked by SO_PEERCRED.
final class AdminMethods<Figures: AdminFigures> {
    typealias AdminCall = RequestCall<Figures.Host>

    /// Maintenance (the figures of `admin.stats`).
    private let maintenance: any StorageMaintenance
    /// The backup, and the audit log it leaves its entry in.
    private let storage: BoundStorage<any BackupStorage & AuditStorage & MailStorage>
    private unowned let figures: Figures

    init(storage: any Storage, figures: Figures) {
        maintenance = storage
        self.storage = BoundStorage { storage.acting(for: $0) }
        self.figures = figures
    }

    func backup(_ call: AdminCall) {
        guard call.mayAdminister(figures.isAdmin) else { return call.fail(.forbidden) }
        let path = call.params.string("path") ?? ""
        guard path.hasPrefix("/"), !path.hasSuffix("/") else {
            return call.fail(.invalidParams(param: "path", problem: .outOfRange))
        }
        let charge = call.connection.queueCharge
        storage.acting(for: charge).backup(to: path) { [self] result in
            let answer: Result<JSONValue, RosterError>
            let failure: String?
            switch result {
            case .success(let summary):
                figures.logger.notice("database backed up to \(summary.path)")
                answer = .success(["path": .string(summary.path), "pages": .int(summary.pages), "bytes": .int(summary.bytes)])
                failure = nil
            case .failure(.refused(let refusal)):
                // The `path` param's fault, with its own reason (the storage logged it).
                answer = .failure(.invalidParams(param: "path", problem: refusal.problem))
                failure = refusal.problem.rawValue
            case .failure(.storage(let storageFailure)):
                answer = .failure(storageFailure.rosterError)
                failure = storageFailure.rosterError.reason
            }
            // Answered once its entry is stored (or could not be), so the log read next holds it.
            let entry = AuditRecord(event: .backup, username: nil, peer: call.auditPeer,
                                    outcome: failure == nil ? .succeeded : .failed, reason: failure)
            storage.acting(for: charge).appendAudit(entry) { [figures] stored in
                if case .failure(let storageFailure) = stored {
                    figures.logger.warning("the backup's audit entry could not be written: \(storageFailure.rosterError.reason)")
                }
                call.finish(answer)
            }
        }
    }

    func stats(_ call: AdminCall) {
        guard call.mayAdminister(figures.isAdmin) else {
            call.fail(.forbidden)
            return
        }
        // While the storage cannot count (a database that is down), the daemon's own figures and the storage's
        // state are what an administrator needs most; the counts read null.
        maintenance.statistics { [self] result in
            call.succeed(statsJSON(try? result.get()))
        }
    }

    /// Mails listed at most, and by default.
    static var maxMailListLimit: Int64 { 1_000 }
    static var defaultMailListLimit: Int64 { 100 }

    /// `admin.mail.list`: the outbox, newest first, without messages or codes.
    func listMail(_ call: AdminCall) {
        guard call.mayAdminister(figures.isAdmin) else { return call.fail(.forbidden) }
        var status: MailStatus?
        if let typed = call.params.string("status") {
            guard let known = MailStatus(rawValue: typed) else {
                return call.fail(.invalidParams(param: "status", problem: .outOfRange))
            }
            status = known
        }
        let limit = Int(call.params.int("limit") ?? Self.defaultMailListLimit)
        storage.acting(for: call.connection.queueCharge).listMail(status: status, limit: limit) { result in
            call.finish(result.map { ["items": .array($0.map(\.json))] }.mapError(\.rosterError))
        }
    }

    /// `admin.stats`' answer, with the storage's own figures when it could give them.
    private func statsJSON(_ storage: StorageStatistics?) -> JSONValue {
        let hashing = figures.hashingStats
        let stats = figures.stats
        let state = figures.storageState
        return [
            "version": .string(RosterVersion.version),
            "pid": .int(Int(getpid())),
            "uptime_ms": .int(figures.uptime.nanoseconds / 1_000_000),
            "connections": .int(figures.connectionCount),
            "sessions": .int(figures.greetedSessionCount),
            "users": storage.map { .int($0.accounts) } ?? .null,
            "contacts": storage.map { .int($0.contacts) } ?? .null,
            // This request is counted as served once answered, so report the ones before it.
            "requests": .int(stats.requestsServed),
            "events": .int(stats.eventsSent),
            "connections_accepted": .int(stats.connectionsAccepted),
            "hash_workers": .int(hashing.workers),
            "hash_queue": .int(hashing.waiting),
            "hash_queue_limit": .int(hashing.limit),
            "hash_raised": .int(hashing.raised),
            "username_directory": storage.map { .string($0.usernameDirectory) } ?? .null,
            "queues": [
                "hashing": Self.queueJSON(hashing),
                "storage": Self.queueJSON(storage?.queues["storage"]),
                "checks": Self.queueJSON(figures.checksStats),
            ],
            "storage": ["backend": .string(state.backend), "state": .string(state.phase.rawValue), "since": .int(state.sinceMs)],
            "mail": storage?.mail.map { ["queued": .int($0.queued), "failed": .int($0.failed), "sent": .int($0.sent)] } ?? .null,
        ]
    }

    /// A queue's figures; a backend without that queue reads as an empty one.
    private static func queueJSON(_ stats: WorkerPoolStats?) -> JSONValue {
        [
            "workers": .int(stats?.workers ?? 0), "waiting": .int(stats?.waiting ?? 0), "running": .int(stats?.running ?? 0),
            "limit": .int(stats?.limit ?? 0), "refused": .int(stats?.refused ?? 0), "raised": .int(stats?.raised ?? 0),
        ]
    }
}

extension AdminMethods: MethodGroup {
    typealias Host = Figures.Host

    /// The admin methods' entries of the dispatcher's table; each handler is handed the group when called.
    static var table: [MethodEntry<AdminMethods>] {
        [
            MethodEntry(spec: MethodSpec(
                "admin.stats",
                summary: "Counters of the running daemon (root or the daemon's own uid only).",
                result: .object([
                    FieldSpec("version", .string), FieldSpec("pid", .integer(0...Int64(Int32.max))),
                    FieldSpec("uptime_ms", .integer(0...Int64.max)), FieldSpec("connections", .integer(0...Int64.max)),
                    FieldSpec("sessions", .integer(0...Int64.max)),
                    // Null while the storage cannot count (a database that is down).
                    FieldSpec("users", .described("integer or null")), FieldSpec("contacts", .described("integer or null")),
                    FieldSpec("requests", .integer(0...Int64.max)),
                    FieldSpec("events", .integer(0...Int64.max)), FieldSpec("connections_accepted", .integer(0...Int64.max)),
                    FieldSpec("hash_workers", .integer(1...Int64.max)), FieldSpec("hash_queue", .integer(0...Int64.max)),
                    FieldSpec("hash_queue_limit", .integer(1...Int64.max)),
                    FieldSpec("hash_raised", .integer(0...Int64.max)),
                    FieldSpec("username_directory", .described("string or null")),
                    FieldSpec("queues", .described("{hashing, storage, checks}, each {workers, waiting, running, limit, refused, raised}")),
                    FieldSpec("storage", .object([FieldSpec("backend", .oneOf(["sqlite", "postgresql"])),
                                                  FieldSpec("state", .oneOf(["connecting", "up", "down"])),
                                                  FieldSpec("since", .integer(0...Int64.max))])),
                    // Counted with `users` and `contacts`: null while the storage cannot count.
                    FieldSpec("mail", .described("{queued, failed, sent} or null")),
                ])), handler: { $0.stats($1) }),
            MethodEntry(spec: MethodSpec(
                "admin.mail.list",
                summary: "The outbox newest first, by status, without messages or codes (admin only).",
                params: [.optional("status", .oneOf(MailStatus.allCases.map(\.rawValue))),
                         .optional("limit", .integer(1...maxMailListLimit))],
                result: .object([FieldSpec("items", .array(.described(
                    "{id, recipient, kind, status, attempts, last_error, queued_at, next_attempt_at, sent_at}")))])),
                   handler: { $0.listMail($1) }),
            MethodEntry(spec: MethodSpec(
                "admin.backup",
                summary: "Copy the live database to an absolute path that does not exist yet, checked with integrity_check (admin only).",
                params: [FieldSpec("path", .string)],
                result: .object([FieldSpec("path", .string), FieldSpec("pages", .integer(0...Int64.max)),
                                 FieldSpec("bytes", .integer(0...Int64.max))])), handler: { $0.backup($1) }),
        ]
    }
}

extension MailListing {
    /// One item of `admin.mail.list`.
    fileprivate var json: JSONValue {
        [
            "id": .int(id), "recipient": .string(recipient), "kind": .string(kind.rawValue),
            "status": .string(status.rawValue), "attempts": .int(Int64(attempts)),
            "last_error": lastError.map(JSONValue.string) ?? .null,
            "queued_at": .string(UTCTime.rfc3339(unixMs: queuedAtMs)),
            "next_attempt_at": nextAttemptAtMs.map { .string(UTCTime.rfc3339(unixMs: $0)) } ?? .null,
            "sent_at": sentAtMs.map { .string(UTCTime.rfc3339(unixMs: $0)) } ?? .null,
        ]
    }
}
