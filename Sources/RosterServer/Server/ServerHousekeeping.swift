import RosterCore
import RosterRuntime

/// Periodic chores on the loop: the watchdog ping (from the loop, so a stuck loop is caught), the status line
/// systemd shows, and pruning what no longer counts.
extension Server {
    public func startHousekeeping(notifier: SystemdNotifier) {
        if let interval = notifier.watchdogInterval {
            repeatEvery(interval / 2) { notifier.watchdogPing() }
        }
        statusNotifier = notifier
        postStatus()
        repeatEvery(.seconds(5)) { [unowned self] in self.postStatus() }
        repeatEvery(.seconds(600)) { [unowned self] in self.pruneExpired() }
        // A peer's minute of left-out failed entries is summed up within this much of its end.
        repeatEvery(.seconds(10)) { [unowned self] in self.accounts.sweepFailedEntries() }
        startAuditPruning(on: loop)
    }

    /// How often the audit log is pruned, after once at start.
    static var auditPruneInterval: Duration { .seconds(3_600) }

    /// Prunes the audit log now and then every `auditPruneInterval` on `scheduler` (the loop; a manual clock in a
    /// test), each time by the `[Audit] RetentionDays=` in force then.
    func startAuditPruning(on scheduler: any Scheduler) {
        pruneAudit()
        scheduler.schedule(at: scheduler.now + Self.auditPruneInterval) { [weak self] in
            guard let self, !self.isStopping else { return }
            self.startAuditPruning(on: scheduler)
        }
    }

    /// Deletes the audit entries older than the retention, and says how many went.
    func pruneAudit() {
        let days = config.audit.retentionDays
        let cutoff = config.audit.retainedSinceMs(nowMs: wallClock.nowMs())
        storage.acting(for: .daemon).pruneAudit(before: cutoff) { [weak self] result in
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

    /// Work that may wait until READY=1 was sent, so a large database does not slow start-up.
    public func warmUp() {
        storage.warmUp()
    }

    /// Drops failed log-ins older than the window and tokens idle past their limit; both are dead weight by then.
    func pruneExpired() {
        storage.pruneExpired(failureWindowMs: config.policy.rateLimitInterval.nanoseconds / 1_000_000,
                             tokenIdleMs: config.policy.sessionIdle.nanoseconds / 1_000_000)
    }

    /// What `systemctl status rosterd` shows under the unit's name; also at once when the storage's state changes.
    /// While the storage cannot count its users, the line says so rather than going stale.
    func postStatus() {
        guard let notifier = statusNotifier else { return }
        storage.statistics { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let statistics): notifier.status(self.statusLine(accounts: statistics.accounts))
            // The storage's own state says why (see `storageStatus`); the line shows that nobody was counted.
            case .failure: notifier.status(self.statusLine(accounts: nil))
            }
        }
    }

    func statusLine(accounts: Int?) -> String {
        let loggedIn = connections.values.reduce(0) { $0 + ($1.session.user == nil ? 0 : 1) }
        let users = accounts.map { "\($0) user(s)" } ?? "users not counted"
        let line = "Serving \(connectionCount) connection(s), \(loggedIn) logged in; \(users)"
        return storageStatus.map { "\(line); \($0)" } ?? line
    }

    private func repeatEvery(_ interval: Duration, _ body: @escaping () -> Void) {
        loop.schedule(at: loop.now + interval) { [weak self] in
            guard let self, !self.isStopping else { return }
            body()
            self.repeatEvery(interval, body)
        }
    }
}
