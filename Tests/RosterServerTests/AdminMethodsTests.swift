import RosterCore
import RosterProtocol
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Glibc
import Testing
@testable import RosterServer

/// The server-wide figures, set by hand.
final class FakeAdminFigures: AdminFigures {
    typealias Host = RecordingCallHost
    var admins: Set<UInt32> = [1000]
    var uptime: Duration = .milliseconds(12_345)
    var connectionCount = 3
    var greetedSessionCount = 2
    var stats = ServerStats(requestsServed: 41, eventsSent: 17, connectionsAccepted: 9)
    var hashingStats = WorkerPoolStats(workers: 2, waiting: 1, running: 2, limit: 64, refused: 5, raised: 1)
    var checksStats = WorkerPoolStats(workers: 1, waiting: 0, running: 1, limit: 32, refused: 0, raised: 0)
    var storageState = StorageState(backend: "postgresql", phase: .up, sinceMs: 1_796_114_400_000)
    let logger = Logger(level: .emerg)

    func isAdmin(_ peer: PeerCredentials) -> Bool { admins.contains(peer.uid) }
}

/// `admin.*` on an in-memory storage and figures set by hand, with no server and no socket.
@Suite("Admin methods on an in-memory storage")
struct AdminMethodsTests {
    let storage = InMemoryStorage()
    let figures = FakeAdminFigures()
    let methods: AdminMethods<FakeAdminFigures>

    init() { methods = AdminMethods(storage: storage, figures: figures) }

    private func call(_ method: String, id: Int64, _ params: [(String, JSONValue)] = [],
                      on host: RecordingCallHost) throws -> RequestCall<RecordingCallHost> {
        let spec = try #require(AdminMethods<FakeAdminFigures>.table.first { $0.spec.name == method }?.spec)
        return RequestCall(id: .int(id), params: try Params(validating: params, against: spec.params), connection: host)
    }

    private func answer(_ id: Int, _ result: String) -> RecordingCallHost.Event {
        .answer(#"{"jsonrpc":"2.0","id":\#(id),"result":\#(result)}"# + "\n", id: .int(Int64(id)))
    }

    private func error(_ id: Int, _ error: RosterError) -> [RecordingCallHost.Event] {
        [.answered, .error(error, id: .int(Int64(id))), .finished]
    }

    @Test func onlyAnAdminIsServed() throws {
        figures.admins = [0]
        let host = RecordingCallHost()
        methods.stats(try call("admin.stats", id: 1, on: host))
        methods.backup(try call("admin.backup", id: 2, [("path", "/tmp/copy.db")], on: host))
        #expect(host.history == error(1, .forbidden) + error(2, .forbidden))
        #expect(storage.calls == [])
    }

    @Test func aBackupGoesToAnAbsoluteFilePathAndIsAnsweredWithItsSummary() throws {
        let host = RecordingCallHost()
        methods.backup(try call("admin.backup", id: 1, [("path", "copy.db")], on: host))
        methods.backup(try call("admin.backup", id: 2, [("path", "/var/backups/")], on: host))
        methods.backup(try call("admin.backup", id: 3, [("path", "/var/backups/copy.db")], on: host))
        #expect(host.history == error(1, .invalidParams(param: "path", problem: .outOfRange))
                + error(2, .invalidParams(param: "path", problem: .outOfRange))
                + [.answered, answer(3, #"{"path":"/var/backups/copy.db","pages":0,"bytes":0}"#), .finished])
        #expect(storage.backups == ["/var/backups/copy.db"])
    }

    /// A refused target is the `path` param's fault, with the refusal's own reason; a storage failure is the
    /// storage's one mapping; a backup already running answers `busy`.
    @Test func refusalsFailuresAndABusyStorageAreMappedByReason() throws {
        let host = RecordingCallHost()
        methods.backup(try call("admin.backup", id: 1, [("path", "/srv/a.db")], on: host))
        methods.backup(try call("admin.backup", id: 2, [("path", "/srv/a.db")], on: host))
        storage.failures[.backup] = .full
        methods.backup(try call("admin.backup", id: 3, [("path", "/srv/b.db")], on: host))
        storage.failures = [:]
        storage.answering = .onRelease
        methods.backup(try call("admin.backup", id: 4, [("path", "/srv/c.db")], on: host))
        methods.backup(try call("admin.backup", id: 5, [("path", "/srv/d.db")], on: host))
        #expect(storage.releaseNext())
        #expect(storage.releaseNext(), "backup 5's busy answer is not answered before its entry is stored")
        #expect(storage.releaseNext(), "nor backup 4's")
        #expect(host.history == [.answered, answer(1, #"{"path":"/srv/a.db","pages":0,"bytes":0}"#), .finished]
                + error(2, .invalidParams(param: "path", problem: BackupRefusal.targetExists.problem))
                + error(3, StorageFailure.full.rosterError)
                + error(5, .busy(retryAfterMs: 1_000))
                + [.answered, answer(4, #"{"path":"/srv/c.db","pages":0,"bytes":0}"#), .finished])
        #expect(storage.backups == ["/srv/a.db", "/srv/c.db"])
        // Every backup asked for leaves one entry, with the refusal's reason, naming the peer that asked.
        #expect(storage.auditLog.map { "\($0.record.event.rawValue) \($0.record.outcome.rawValue) \($0.record.reason ?? "-")" }
                == ["backup succeeded -", "backup failed target_exists", "backup failed storage_full", "backup failed busy",
                    "backup succeeded -"])
        #expect(storage.auditLog.allSatisfy { $0.record.peer == AuditPeer(uid: 1000, pid: 42, client: nil) && $0.record.username == nil })
    }

    /// A stats line: every figure in a fixed order, the storage's figures given (or null, while it cannot count).
    private static func statsLine(id: Int, pid: Int64, counted: Bool, state: String, since: Int64) -> String {
        let queue = #"{"workers":%d,"waiting":%d,"running":%d,"limit":%d,"refused":%d,"raised":%d}"#
        let counts = counted ? #""users":0,"contacts":0,"# : #""users":null,"contacts":null,"#
        let directory = counted ? #""ready""# : "null"
        return #"{"jsonrpc":"2.0","id":\#(id),"result":{"version":"\#(RosterVersion.version)","pid":"#
            + #"\#(pid),"uptime_ms":12345,"connections":3,"sessions":2,\#(counts)"#
            + #""requests":41,"events":17,"connections_accepted":9,"hash_workers":2,"hash_queue":1,"#
            + #""hash_queue_limit":64,"hash_raised":1,"username_directory":\#(directory),"queues":{"#
            + #""hashing":\#(String(format: queue, 2, 1, 2, 64, 5, 1)),"storage":\#(String(format: queue, 0, 0, 0, 0, 0, 0)),"#
            + #""checks":\#(String(format: queue, 1, 0, 1, 32, 0, 0))},"#
            + #""storage":{"backend":"postgresql","state":"\#(state)","since":\#(since)},"#
            + (counted ? #""mail":{"queued":0,"failed":0,"sent":0}}}"# : #""mail":null}}"#) + "\n"
    }

    /// Down or up, stats answer: the daemon's figures and the storage's state are what an administrator needs
    /// during an outage, so only the counts the storage cannot give read null.
    @Test func statsAnswersTheServersFiguresBesideTheStoragesInAFixedShape() throws {
        let host = RecordingCallHost()
        methods.stats(try call("admin.stats", id: 1, on: host))
        storage.failure = .unavailable(retryAfterMs: 500)
        figures.storageState = StorageState(backend: "postgresql", phase: .down, sinceMs: 1_796_114_460_000)
        methods.stats(try call("admin.stats", id: 2, on: host))
        let pid = Int64(getpid())
        #expect(host.history == [
            .answered, .answer(Self.statsLine(id: 1, pid: pid, counted: true, state: "up", since: 1_796_114_400_000), id: 1),
            .finished,
            .answered, .answer(Self.statsLine(id: 2, pid: pid, counted: false, state: "down", since: 1_796_114_460_000), id: 2),
            .finished,
        ])
    }
}
