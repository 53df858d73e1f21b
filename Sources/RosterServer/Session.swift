import RosterCore
import RosterStore

/// What one connection has told us about itself: language, timing overrides, who logged in, and its open forms.
final class Session {
    var locale: RosterLocale = .default
    /// `session.hello` overrides; nil follows the configuration, including after a reload.
    var debounceOverride: Duration?
    var throttleOverride: Duration?
    var client: String?
    var greeted = false
    /// The account this connection is logged in as, and the hash of the token it holds (to revoke at log-out).
    var user: UserRecord?
    var tokenHash: [UInt8]?
    var forms: [FormName: OpenForm] = [:]
    private var formsOpened: UInt64 = 0
    private var pendingAuthChanges: [(@escaping () -> Void) -> Void] = []
    private var authChangeRunning = false

    /// Log-in, resume and log-out change who the session is. Their answers may come back in any order, but they
    /// take effect in the order they arrived, so "log in, log out" pipelined ends logged out.
    func inAuthOrder(_ change: @escaping (_ done: @escaping () -> Void) -> Void) {
        pendingAuthChanges.append(change)
        runNextAuthChange()
    }

    private func runNextAuthChange() {
        guard !authChangeRunning, !pendingAuthChanges.isEmpty else { return }
        authChangeRunning = true
        let change = pendingAuthChanges.removeFirst()
        change { [weak self] in
            self?.authChangeRunning = false
            self?.runNextAuthChange()
        }
    }

    func debounce(under policy: Policy) -> Duration { debounceOverride ?? policy.debounce }
    func throttle(under policy: Policy) -> Duration { throttleOverride ?? policy.throttle }

    /// Check tokens of a session's forms never collide, even across a reopened form.
    func nextFirstToken() -> UInt64 {
        formsOpened += 1
        return formsOpened << 32
    }

    func closeAllForms() {
        for form in forms.values { form.close() }
        forms = [:]
    }
}
