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
            notifier.status(self.statusLine(accounts: try? result.get().accounts))
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
