import Glibc
import RosterCore
import RosterRuntime
import RosterProtocol

/// `admin.*`: for root and the daemon's own user only, checked by SO_PEERCRED.
extension Server {
    func adminMethods() -> [Method] {
        [
            Method(spec: MethodSpec(
                "admin.stats",
                summary: "Counters of the running daemon (root or the daemon's own uid only).",
                result: .object([
                    FieldSpec("version", .string), FieldSpec("pid", .integer(0...Int64(Int32.max))),
                    FieldSpec("uptime_ms", .integer(0...Int64.max)), FieldSpec("connections", .integer(0...Int64.max)),
                    FieldSpec("sessions", .integer(0...Int64.max)), FieldSpec("users", .integer(0...Int64.max)),
                    FieldSpec("contacts", .integer(0...Int64.max)),
                    FieldSpec("requests", .integer(0...Int64.max)),
                    FieldSpec("events", .integer(0...Int64.max)), FieldSpec("connections_accepted", .integer(0...Int64.max)),
                    FieldSpec("hash_workers", .integer(1...Int64.max)), FieldSpec("hash_queue", .integer(0...Int64.max)),
                    FieldSpec("hash_queue_limit", .integer(1...Int64.max)),
                    FieldSpec("hash_raised", .integer(0...Int64.max)), FieldSpec("username_directory", .string),
                    FieldSpec("queues", .described("{hashing, storage}, each {workers, waiting, running, limit, refused, raised}")),
                ])), handler: Server.adminStats),
            Method(spec: MethodSpec(
                "admin.backup",
                summary: "Copy the live database to an absolute path that does not exist yet, checked with integrity_check (admin only).",
                params: [FieldSpec("path", .string)],
                result: .object([FieldSpec("path", .string), FieldSpec("pages", .integer(0...Int64.max)),
                                 FieldSpec("bytes", .integer(0...Int64.max))])), handler: Server.adminBackup),
        ]
    }

    private func adminBackup(_ call: Call) {
        guard isAdmin(call.peer) else { return call.fail(.forbidden) }
        let path = call.params.string("path") ?? ""
        guard path.hasPrefix("/"), !path.hasSuffix("/") else {
            return call.fail(.invalidParams(param: "path", problem: .outOfRange))
        }
        accounts.backup(to: path, charge: call.connection.queueCharge) { [self] result in
            switch result {
            case .success(let summary):
                logger.notice("database backed up to \(summary.path)", [("ROSTER_EVENT", "backup")])
                call.succeed(["path": .string(summary.path), "pages": .int(summary.pages), "bytes": .int(summary.bytes)])
            case .failure(let error):
                call.fail(error)
            }
        }
    }

    private func adminStats(_ call: Call) {
        guard isAdmin(call.peer) else {
            call.fail(.forbidden)
            return
        }
        let uptime = loop.now - startedAt
        let hashing = accounts.lanes.hashing.stats
        call.succeed([
            "version": .string(RosterVersion.version),
            "pid": .int(Int(getpid())),
            "uptime_ms": .int(uptime.nanoseconds / 1_000_000),
            "connections": .int(connectionCount),
            "sessions": .int(greetedSessionCount),
            "users": .int(accounts.userCount()),
            "contacts": .int(accounts.contactCount()),
            // This request is counted as served once answered, so report the ones before it.
            "requests": .int(stats.requestsServed),
            "events": .int(stats.eventsSent),
            "connections_accepted": .int(stats.connectionsAccepted),
            "hash_workers": .int(hashing.workers),
            "hash_queue": .int(hashing.waiting),
            "hash_queue_limit": .int(hashing.limit),
            "hash_raised": .int(hashing.raised),
            "username_directory": .string(accounts.usernameDirectoryPhase.rawValue),
            "queues": [
                "hashing": Self.queueJSON(hashing),
                "storage": Self.queueJSON(accounts.lanes.storage.stats),
            ],
        ])
    }

    private static func queueJSON(_ stats: WorkerPool<WorkerContext>.Stats) -> JSONValue {
        [
            "workers": .int(stats.workers), "waiting": .int(stats.waiting), "running": .int(stats.running),
            "limit": .int(stats.limit), "refused": .int(stats.refused), "raised": .int(stats.raised),
        ]
    }
}
