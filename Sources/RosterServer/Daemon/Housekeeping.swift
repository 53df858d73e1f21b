import RosterCore
import RosterRuntime
import RosterStore

/// Periodic chores on the loop: the watchdog ping (from the loop, so a stuck loop is caught), the status line
/// systemd shows, and pruning what no longer counts.
extension Server {
    public func startHousekeeping(notifier: SystemdNotifier) {
        if let interval = notifier.watchdogInterval {
            repeatEvery(interval / 2) { notifier.watchdogPing() }
        }
        notifier.status(statusLine)
        repeatEvery(.seconds(5)) { [unowned self] in notifier.status(self.statusLine) }
        repeatEvery(.seconds(600)) { [unowned self] in self.accounts.pruneExpired() }
    }

    /// Work that may wait until READY=1 was sent, so a large database does not slow start-up.
    public func warmUp() {
        accounts.loadUsernameDirectory()
    }

    /// What `systemctl status rosterd` shows under the unit's name.
    var statusLine: String {
        let loggedIn = connections.values.reduce(0) { $0 + ($1.session.user == nil ? 0 : 1) }
        return "Serving \(connectionCount) connection(s), \(loggedIn) logged in; \(accounts.userCount()) user(s)"
    }

    private func repeatEvery(_ interval: Duration, _ body: @escaping () -> Void) {
        loop.schedule(at: loop.now + interval) { [weak self] in
            guard let self, !self.isStopping else { return }
            body()
            self.repeatEvery(interval, body)
        }
    }
}
