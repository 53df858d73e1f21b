import RosterCore
import RosterRuntime
import RosterStorage

/// The daemon's own figures for `admin.stats` and the status line: how long it runs, its connections and sessions,
/// its counters, its worker lanes and the storage's state; and who may read them.
final class ServerFigures: AdminFigures, HousekeepingStatus {
    typealias Host = Connection

    private let clock: any Scheduler
    private let startedAt: Instant
    private let connections: ConnectionTable<Connection>
    let stats: ServerStats
    private let passwords: PasswordLanes
    private let feed: StorageFeed
    private let trust: PeerTrust
    /// Read at each backup, so that a reload's log level reaches it.
    var logger: Logger

    init(clock: any Scheduler, connections: ConnectionTable<Connection>, stats: ServerStats, passwords: PasswordLanes,
         feed: StorageFeed, trust: PeerTrust, logger: Logger) {
        self.clock = clock
        startedAt = clock.now
        self.connections = connections
        self.stats = stats
        self.passwords = passwords
        self.feed = feed
        self.trust = trust
        self.logger = logger
    }

    func isAdmin(_ peer: PeerCredentials) -> Bool { trust.isAdmin(peer) }
    var uptime: Duration { clock.now - startedAt }
    var connectionCount: Int { connections.count }
    /// Connections that said `session.hello`.
    var greetedSessionCount: Int { connections.values.reduce(0) { $0 + ($1.session.greeted ? 1 : 0) } }
    var loggedInCount: Int { connections.values.reduce(0) { $0 + ($1.session.user == nil ? 0 : 1) } }
    var hashingStats: WorkerPoolStats { passwords.hashing.stats }
    var checksStats: WorkerPoolStats { passwords.checks.stats }
    var storageState: StorageState { feed.state }
    var storageStatus: String? { feed.status }
}
