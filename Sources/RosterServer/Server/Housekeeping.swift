import RosterCore
import RosterRuntime
import RosterStorage

/// Where housekeeping tells the service manager how the daemon does: `SystemdNotifier`, a recorder in a test.
protocol HousekeepingNotifier {
    /// The interval the manager expects watchdog pings within, if it set one.
    var watchdogInterval: Duration? { get }
    func watchdogPing()
    /// The line `systemctl status` shows under the unit's name.
    func status(_ text: String)
}

extension SystemdNotifier: HousekeepingNotifier {}

/// What the status line counts, read each time it is posted: the server's figures, a double in a test.
protocol HousekeepingStatus: AnyObject {
    var connectionCount: Int { get }
    /// Connections whose session is logged in.
    var loggedInCount: Int { get }
    /// How the storage reads in the status line: nothing while it serves.
    var storageStatus: String? { get }
}

/// The daemon's periodic chores, on its scheduler (the loop; a manual clock in a test): the watchdog ping, the
/// status line systemd shows, and pruning what no longer counts.
///
/// RULES
///   • The watchdog is pinged at half the interval the manager set (not at all when it set none), from the loop,
///     so that a stuck loop is caught.
///   • The status line is posted at start, every `statusInterval`, and at once when the storage's phase changes
///     (`postStatus`). While the storage cannot count its users, the line says so rather than going stale.
///   • Failed log-ins older than the rate-limit window and tokens idle past their limit are pruned every
///     `expiredPruneInterval` (and once by the assembly, for what expired while no daemon ran).
///   • A peer's minute of left-out failed log-in entries is summed up within `failedEntrySweepInterval` of its end.
///   • The audit log is pruned at start and every `auditPruneInterval`, each time by the `[Audit] RetentionDays=`
///     in force then.
///   • `stop` cancels every repeat: none fires after it, and none is set again.
final class Housekeeping {
    static let statusInterval: Duration = .seconds(5)
    static let expiredPruneInterval: Duration = .seconds(600)
    static let failedEntrySweepInterval: Duration = .seconds(10)
    static let auditPruneInterval: Duration = .seconds(3_600)

    /// Each repeat, for its timer to be found again and cancelled.
    private enum Chore {
        case watchdog, status, expired, failedEntries, audit
    }

    private let scheduler: any Scheduler
    private let maintenance: any StorageMaintenance
    /// The audit log, its pruning charged to the daemon.
    private let audit: BoundStorage<any AuditStorage>
    private let status: any HousekeepingStatus
    /// The wall clock stored times are read against (what the audit log's retention counts back from).
    private let wallClock: any WallClock
    /// Sums up the failed log-in entries left out of the audit log (`AccountProcedures.sweepFailedEntries`).
    private let sweepFailedEntries: () -> Void
    /// The configuration in force: a reload replaces it, and the next turn of each chore judges by it.
    var config: DaemonConfig
    /// Read at each use: a reload's log level reaches the chores' lines at once.
    var logger: Logger
    /// Where the status line goes, once started.
    private var notifier: (any HousekeepingNotifier)?
    private let timers: KeyedTimers<Chore>
    private var isStopped = false

    init(scheduler: any Scheduler, storage: any Storage, status: any HousekeepingStatus,
         wallClock: any WallClock, config: DaemonConfig, logger: Logger, sweepFailedEntries: @escaping () -> Void) {
        self.scheduler = scheduler
        self.timers = KeyedTimers(on: scheduler)
        self.maintenance = storage
        self.audit = BoundStorage { storage.acting(for: $0) }
        self.status = status
        self.wallClock = wallClock
        self.config = config
        self.logger = logger
        self.sweepFailedEntries = sweepFailedEntries
    }

    /// Starts every repeat; the status line and the audit log's pruning also run once now.
    func start(notifier: any HousekeepingNotifier) {
        if let interval = notifier.watchdogInterval {
            repeatEvery(interval / 2, .watchdog) { notifier.watchdogPing() }
        }
        self.notifier = notifier
        postStatus()
        repeatEvery(Self.statusInterval, .status) { [unowned self] in self.postStatus() }
        repeatEvery(Self.expiredPruneInterval, .expired) { [unowned self] in self.pruneExpired() }
        repeatEvery(Self.failedEntrySweepInterval, .failedEntries) { [unowned self] in self.sweepFailedEntries() }
        startAuditPruning()
    }

    /// Prunes the audit log now, and then every `auditPruneInterval`.
    func startAuditPruning() {
        pruneAudit()
        repeatEvery(Self.auditPruneInterval, .audit) { [unowned self] in self.pruneAudit() }
    }

    /// Cancels every repeat (the daemon is shutting down).
    func stop() {
        isStopped = true
        timers.cancelAll()
    }

    /// Work that may wait until READY=1 was sent, so a large database does not slow start-up.
    func warmUp() {
        maintenance.warmUp()
    }

    /// Drops failed log-ins older than the window and tokens idle past their limit; both are dead weight by then.
    func pruneExpired() {
        maintenance.pruneExpired(failureWindowMs: config.policy.rateLimitInterval.nanoseconds / 1_000_000,
                             tokenIdleMs: config.policy.sessionIdle.nanoseconds / 1_000_000)
    }

    /// Deletes the audit entries older than the retention, and says how many went.
    func pruneAudit() {
        let days = config.audit.retentionDays
        let cutoff = config.audit.retainedSinceMs(nowMs: wallClock.nowMs())
        audit.acting(for: .daemon).pruneAudit(before: cutoff) { [weak self] result in
            guard let self else { return }
            let fields = [("ROSTER_EVENT", "audit_pruned")]
            switch result {
            case .success(let count) where count > 0:
                self.logger.info("audit log pruned: \(count) entr\(count == 1 ? "y" : "ies") older than \(days) day(s)",
                                 fields + [("ROSTER_PRUNED", String(count))])
            case .success:
                self.logger.debug("audit log pruned: 0 entries older than \(days) day(s)", fields + [("ROSTER_PRUNED", "0")])
            case .failure(let failure):
                self.logger.warning("audit log not pruned: \(failure)", fields)
            }
        }
    }

    /// What `systemctl status rosterd` shows under the unit's name; nothing before `start`.
    func postStatus() {
        guard let notifier else { return }
        maintenance.statistics { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let statistics): notifier.status(self.statusLine(accounts: statistics.accounts))
            // The storage's own state says why (see `storageStatus`); the line shows that nobody was counted.
            case .failure: notifier.status(self.statusLine(accounts: nil))
            }
        }
    }

    func statusLine(accounts: Int?) -> String {
        let users = accounts.map { "\($0) user(s)" } ?? "users not counted"
        let line = "Serving \(status.connectionCount) connection(s), \(status.loggedInCount) logged in; \(users)"
        return status.storageStatus.map { "\(line); \($0)" } ?? line
    }

    private func repeatEvery(_ interval: Duration, _ chore: Chore, _ body: @escaping () -> Void) {
        guard !isStopped else { return }
        // A second start replaces a chore's repeat rather than running it twice as often.
        timers.set(chore, at: scheduler.now + interval) { [weak self] in
            guard let self else { return }
            body()
            self.repeatEvery(interval, chore, body)
        }
    }
}
