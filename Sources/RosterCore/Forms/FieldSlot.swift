/// One field's inputs, checks and what its client was last told.
struct FieldSlot: Sendable {
    /// Where the latest input is on its way to a verdict.
    enum Phase: Equatable, Sendable {
        /// The verdict in `shown` is for the current rev.
        case settled
        /// Waiting for the debounce timer; nothing is known about the current rev yet.
        case debouncing(until: Instant)
        /// The rules passed locally and a check is out.
        case checking(CheckToken, Check)
    }

    /// A field event's content, kept to send only changes.
    struct Published: Equatable, Sendable {
        var verdict: FieldVerdict
        var enabled: Bool
        var rev: Int
    }

    /// Every value is a `Secret`: a dumped form must not show a password, and usernames are personal data too.
    var input = Secret("")
    /// The input the rules last judged, i.e. the debounced value the seeds' combineLatest sees.
    var committed = Secret("")
    var rev = 0
    var phase = Phase.settled
    /// The verdict for the current rev, `nil` while it is not known (debouncing).
    var shown: FieldVerdict? = .empty
    /// The latest final verdict of any rev; enablement follows it, so a field is not disabled while its
    /// neighbour is merely being re-checked.
    var lastFinal = FieldVerdict.empty
    var published: Published
    /// A check asked again about a settled verdict because the store may have changed under it (`StoreChange`);
    /// the verdict stays shown meanwhile, and the answer replaces it only if it still concerns the same input.
    var recheck: CheckToken?

    init(enabled: Bool) {
        published = Published(verdict: .empty, enabled: enabled, rev: 0)
    }

    /// The state of a verdict that is final and for the current input; `nil` otherwise.
    var settledState: FieldState? {
        guard phase == .settled, let shown, shown.isFinal else { return nil }
        return shown.state
    }

    var isDebouncing: Bool {
        if case .debouncing = phase { return true }
        return false
    }

    var token: CheckToken? {
        if case .checking(let token, _) = phase { return token }
        return nil
    }
}
