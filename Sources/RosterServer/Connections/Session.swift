import RosterCore
import RosterRuntime
import RosterStorage

/// What one connection has told us about itself: language, timing overrides, who logged in, and its open forms.
final class Session {
    var locale: RosterLocale = .default
    /// `session.hello` overrides; nil follows the configuration, including after a reload.
    var debounceOverride: Duration?
    var throttleOverride: Duration?
    var client: String?
    /// `session.hello` `remote`: the person a trusted gateway speaks for on this connection; once set, it stays.
    var remote: RemoteAddress?
    var greeted = false
    /// The account this connection is logged in as, and the hash of the token it holds (to revoke at log-out).
    var user: Account?
    var tokenHash: [UInt8]?
    /// What the logged-in session may call: a DAV log-in's token opens only the contacts (`SessionScope`). Set
    /// with every log-in; it matters only while `user` is set.
    var scope: SessionScope = .full
    /// What the contacts writes queued for this log-in carry, ended when it ends (see `SessionGrant`).
    var grant: SessionGrant?
    /// Contacts writes of this connection not answered yet. A change of who the session is waits for them (see
    /// `afterRunningWrites`), so that the writes sent before a log-out are carried out in the session they were
    /// sent in, and only revocations from elsewhere stop them.
    private(set) var writesRunning = 0
    private var afterWrites: [() -> Void] = []
    var forms: [FormName: RunningForm] = [:]
    /// The passkey ceremonies this connection began and has not finished.
    var passkeys = PasskeyCeremonies()
    private var formsOpened: UInt64 = 0
    /// Requests that change who the session is and are not answered yet (see `SessionDependence`); while there
    /// are any, a request that depends on who the session is waits in `held`, and so does all that follows it.
    var authChangesRunning = 0
    var held = HeldRequests()
    /// Whether `Server.authChangeEnded` is serving `held` further up the stack.
    var isServingHeld = false

    func writeStarted() { writesRunning += 1 }

    /// The last running write was answered: what waited for it runs, in the order it asked.
    func writeEnded() {
        writesRunning -= 1
        guard writesRunning == 0 else { return }
        let waiting = afterWrites
        afterWrites = []
        for body in waiting { body() }
    }

    /// Runs `body` now, or once the contacts writes running on this connection have been answered.
    func afterRunningWrites(_ body: @escaping () -> Void) {
        if writesRunning == 0 { body() } else { afterWrites.append(body) }
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
