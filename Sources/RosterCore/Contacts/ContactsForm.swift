// ContactsForm — the contacts form's `query` field, sans I/O (contract §5, seed 000's throttled search).
//
// RULES
//   • The field starts as the empty query at rev 0. An input equal to the previous query is ignored: same
//     rev, no actions (distinctUntilChanged). Any other input bumps the rev.
//   • Throttle (RxSwift `throttle(_, latest: true)`): a search outside a window goes out at once and opens a
//     window of `throttle`; queries arriving inside it are remembered, and when the window ends the newest
//     one is searched, which opens the next window. A window that saw nothing new ends silently. So there
//     is at most one search per window, and the last search is always for the latest query.
//   • An empty query is searched like any other; the runtime lists everything for it.
//   • contactsChanged follows the same throttle, as if the latest query had been typed again (but without a
//     new rev): outside a window it searches at once; inside, the window's end searches the latest query.
//     So a burst of changes from another session (an import adding contacts one by one) pushes at most one
//     `results` per window, and the last push always reflects the final state of the list.
//   • `opened` searches the current query at once without opening a window, so typing right after opening
//     is not held back.
//
// THEORY OF OPERATION
//   The machine holds the latest query, whether it has been searched since it last changed (or the list
//   changed), and the end of the current window, if one is open. Every search carries a fresh token; the
//   runtime runs it against the user's index and pushes a `results` event for that query. If searches
//   ever run off the loop, `isLatest(_:)` lets the runtime drop results overtaken by a newer search, so a
//   stale list never lands after a fresh one. A timer firing before its deadline (the runtime may not
//   cancel in time) or with no window open does nothing.

/// Something the runtime must do for the contacts form. Actions come in order and are performed in order.
public enum ContactsFormAction: Equatable, Sendable {
    /// Search the user's contacts for `query` and push a `results` event for it.
    case search(query: String, token: UInt64)
    /// Arm the form's one timer to fire at `at`, replacing it if it is armed.
    case schedule(at: Instant)
    case cancelTimer
}

/// The contacts form's throttled query: facts in (input, timer, contact changes), actions out.
public struct ContactsForm: Sendable {
    /// The window length; a change applies from the next window on.
    public var throttle: Duration
    /// The latest accepted query.
    public private(set) var query = ""
    /// 0 at open, +1 for each accepted input.
    public private(set) var rev = 0
    private var windowEnd: Instant?
    /// The latest query (or the list under it) changed since the last search, which the window's end owes.
    private var owed = false
    private var lastToken: UInt64 = 0

    public init(throttle: Duration) {
        self.throttle = throttle
    }

    /// The form was opened: its first results, the full list, go out at once.
    public mutating func opened(now: Instant) -> [ContactsFormAction] {
        [search()]
    }

    public mutating func queryReceived(_ query: String, now: Instant) -> (rev: Int, actions: [ContactsFormAction]) {
        guard query != self.query else { return (rev, []) }
        self.query = query
        rev += 1
        return (rev, demandSearch(now: now))
    }

    /// Any change to the user's contacts, from any session.
    public mutating func contactsChanged(now: Instant) -> [ContactsFormAction] {
        demandSearch(now: now)
    }

    public mutating func timerFired(now: Instant) -> [ContactsFormAction] {
        guard let end = windowEnd, now >= end else { return [] }
        guard owed else {
            windowEnd = nil
            return []
        }
        return searchAndOpenWindow(now: now)
    }

    /// The form is closing: nothing more is owed, and an armed timer is no longer wanted.
    public mutating func closed() -> [ContactsFormAction] {
        owed = false
        guard windowEnd != nil else { return [] }
        windowEnd = nil
        return [.cancelTimer]
    }

    /// Whether results for `token` are still the newest wanted; older ones are to be dropped.
    public func isLatest(_ token: UInt64) -> Bool { token == lastToken }

    /// A window whose end has passed but whose timer has not fired yet counts as closed.
    private mutating func demandSearch(now: Instant) -> [ContactsFormAction] {
        if let end = windowEnd, now < end {
            owed = true
            return []
        }
        return searchAndOpenWindow(now: now)
    }

    private mutating func searchAndOpenWindow(now: Instant) -> [ContactsFormAction] {
        let end = now + throttle
        windowEnd = end
        return [search(), .schedule(at: end)]
    }

    private mutating func search() -> ContactsFormAction {
        owed = false
        lastToken += 1
        return .search(query: query, token: lastToken)
    }
}
