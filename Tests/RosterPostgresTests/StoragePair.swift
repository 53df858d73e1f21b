import RosterCore
import RosterPostgres
import RosterPostgresTesting
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Testing

/// Two instances ("daemons") on one new database, on one loop, each recording what it is told: the changes and
/// the audit entries with their origin.
final class StoragePair {
    static let placeholderHash = "$argon2id$v=19$m=8192,t=1,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA"

    let harness: LoopHarness
    let conninfo: String
    let database: String
    let a: PostgreSQLStorage
    let b: PostgreSQLStorage
    var heardByA: [StorageChange] = []
    var heardByB: [StorageChange] = []
    var auditedByA: [(entry: AuditEntry, origin: AuditOrigin)] = []
    var auditedByB: [(entry: AuditEntry, origin: AuditOrigin)] = []

    init(clock: (any WallClock)? = ManualWallClock()) throws {
        harness = try LoopHarness()
        let cluster = try PostgresTestCluster.shared
        conninfo = try cluster.createDatabase()
        database = String(conninfo.split(separator: "=").last ?? "")
        let logger = Logger(level: .err)
        let settings = PostgreSQLSettings(conninfo: conninfo, connections: 2)
        a = try PostgreSQLStorage.open(settings: settings, loop: harness.loop, server: ServerSettings(), cores: 2,
                                       clock: clock, logger: logger)
        b = try PostgreSQLStorage.open(settings: settings, loop: harness.loop, server: ServerSettings(), cores: 2,
                                       clock: clock, logger: logger)
        a.onChange = { [unowned self] in self.heardByA.append($0) }
        b.onChange = { [unowned self] in self.heardByB.append($0) }
        a.onAudit = { [unowned self] in self.auditedByA.append(($0, $1)) }
        b.onAudit = { [unowned self] in self.auditedByB.append(($0, $1)) }
        try harness.run(until: { self.a.state.phase == .up && self.b.state.phase == .up })
    }

    deinit {
        a.stop()
        b.stop()
    }

    func value<T>(_ call: (@escaping StorageCompletion<T>) -> Void) throws -> T {
        try harness.answer(call).get()
    }

    func register(_ name: String, email: String? = nil, on storage: PostgreSQLStorage, audit: AuditRecord? = nil) throws -> Account {
        try value { storage.acting(for: .daemon).createAccount(NewAccount(username: name, display: name, email: email,
                                                                          passwordHash: Self.placeholderHash),
                                                               audit: audit, completion: $0) }
    }

    /// Waits until both listeners are in place: a notification sent before one is listening is lost, so a new
    /// one goes each way every 100 ms until one arrives.
    func waitForListeners() throws {
        for (from, heard) in [(a, { self.heardByB }), (b, { self.heardByA })] {
            var sent = 0
            while heard().isEmpty && sent < 100 {
                sent += 1
                _ = try register("warm\(sent)\(from === a ? "a" : "b")", on: from)
                let deadline = harness.loop.now + .milliseconds(100)
                try harness.run(until: { !heard().isEmpty || harness.loop.now >= deadline })
            }
        }
        heardByA = []
        heardByB = []
    }

    /// Both directories read, with the listeners in place before (so neither says `.resync`).
    func warmUp() throws {
        a.warmUp()
        b.warmUp()
        try harness.run(until: { self.a.knownUsernameTaken("nobody") != nil && self.b.knownUsernameTaken("nobody") != nil })
    }
}
