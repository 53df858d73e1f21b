// ContactsForm — the contacts form's `query` field and the searches it asks for, sans I/O (protocol.md "The
// contacts form"; seed 000's throttled search).
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
//   • Only the latest search counts: its answer is shown (results for the query it searched) or, if it failed,
//     reported; an answer to an older search is dropped, so a stale list never lands after a fresh one.
//   • A search refused `busy` (a storage budget, or too many waiting for the index) is tried again after the
//     refusal's hint (at least 1 ms), as a change to the list, so the last results still answer the latest
//     query. A second refusal moves the retry to its own hint.
//   • A peer that does not read costs one owed refresh, not a search per change: a search the runtime did not
//     run because the peer's socket refused output is remembered, and once the peer has read everything the
//     latest query is searched again, as a change to the list. (300 such forms, each searched and encoded on
//     every change only to be coalesced away, once cut a writer from 1,377 adds/s to 2/s.)
//
// THEORY OF OPERATION
//   The machine holds the latest query, the window (closed, or open until an instant and owing a search or
//   not), the latest search (its token and the query it searched), the retry's deadline if one is armed, and
//   whether a skipped search is owed to the peer. Every search carries a fresh token; the runtime runs it
//   against the user's index and storage and answers with `searchAnswered` (or `peerWasBehind`, without
//   running it). A timer firing before its deadline (the runtime may not cancel in time) or with nothing
//   armed does nothing.

/// The contacts form's two timers.
public enum ContactsFormTimer: Hashable, Sendable {
    /// The end of the throttle window.
    case window
    /// The next try of a search refused `busy`.
    case retry
}

/// Something the runtime must do for the contacts form. Actions come in order and are performed in order.
public enum ContactsFormAction: Equatable, Sendable {
    /// Search the user's contacts for `query` and answer `searchAnswered` with `token`, or `peerWasBehind` without
    /// searching while the peer's socket refuses output. A search still out is stale: its read is called off.
    case search(query: String, token: UInt64)
    /// Push a `results` event: the page the latest search found for `query`.
    case showResults(query: String, page: ContactsPage)
    /// The latest search failed (other than `busy`): there is nothing to show, only to log.
    case reportFailure(RosterError)
    /// Arm `timer` to fire at `at`, replacing it if it is armed.
    case schedule(ContactsFormTimer, at: Instant)
    case cancelTimer(ContactsFormTimer)
}

/// The contacts form's throttled query: facts in (input, timers, contact changes, search answers, the peer's
/// reading), actions out.
public struct ContactsForm: Sendable {
    /// The throttle window: closed, or open until `until`, owing a search at its end when the query (or the list
    /// under it) changed since the search that opened it.
    private enum Window: Equatable, Sendable {
        case closed
        case open(until: Instant, owesSearch: Bool)
    }

    /// The window length; a change applies from the next window on.
    public var throttle: Duration
    /// The latest accepted query.
    public private(set) var query = ""
    /// 0 at open, +1 for each accepted input.
    public private(set) var rev = 0
    private var window = Window.closed
    /// The newest search asked for (token 0: none yet), and the query it searched, which its results are for.
    private var latest = (token: UInt64(0), query: "")
    /// When the search refused `busy` is tried again; nil when no retry is armed.
    private var retryAt: Instant?
    /// A search was not run while the peer was behind; the peer's catching up owes it.
    private var owedToPeer = false

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

    public mutating func timerFired(_ timer: ContactsFormTimer, now: Instant) -> [ContactsFormAction] {
        switch timer {
        case .window:
            switch window {
            case .closed:
                return []
            case .open(let until, _) where now < until:
                return []
            case .open(_, owesSearch: false):
                window = .closed
                return []
            case .open(_, owesSearch: true):
                return searchAndOpenWindow(now: now)
            }
        case .retry:
            guard let at = retryAt, now >= at else { return [] }
            retryAt = nil
            return demandSearch(now: now)
        }
    }

    /// The answer to the search with `token`: shown or reported if it is the latest search's, else dropped.
    public mutating func searchAnswered(token: UInt64, _ result: Result<ContactsPage, RosterError>,
                                        now: Instant) -> [ContactsFormAction] {
        guard isLatest(token) else { return [] }
        switch result {
        case .success(let page):
            return [.showResults(query: latest.query, page: page)]
        case .failure(.busy(let retryAfterMs)):
            let at = now + .milliseconds(max(1, retryAfterMs))
            retryAt = at
            return [.schedule(.retry, at: at)]
        case .failure(let error):
            return [.reportFailure(error)]
        }
    }

    /// A search was not run because the peer's socket refused output: its results would only have been
    /// coalesced away. The peer's catching up (`outputDrained`) searches again.
    public mutating func peerWasBehind() -> [ContactsFormAction] {
        owedToPeer = true
        return []
    }

    /// The peer read all its output: a search skipped meanwhile is owed now, within the throttle.
    public mutating func outputDrained(now: Instant) -> [ContactsFormAction] {
        guard owedToPeer else { return [] }
        owedToPeer = false
        return demandSearch(now: now)
    }

    /// The form is closing: nothing more is owed, and no armed timer is wanted any more.
    public mutating func closed() -> [ContactsFormAction] {
        var actions: [ContactsFormAction] = []
        switch window {
        case .closed: break
        case .open: actions.append(.cancelTimer(.window))
        }
        if retryAt != nil { actions.append(.cancelTimer(.retry)) }
        window = .closed
        retryAt = nil
        owedToPeer = false
        return actions
    }

    /// Whether results for `token` are still the newest wanted; older ones are to be dropped.
    public func isLatest(_ token: UInt64) -> Bool { token == latest.token }

    /// A window whose end has passed but whose timer has not fired yet counts as closed.
    private mutating func demandSearch(now: Instant) -> [ContactsFormAction] {
        switch window {
        case .open(let until, _) where now < until:
            window = .open(until: until, owesSearch: true)
            return []
        case .open, .closed:
            return searchAndOpenWindow(now: now)
        }
    }

    private mutating func searchAndOpenWindow(now: Instant) -> [ContactsFormAction] {
        let end = now + throttle
        window = .open(until: end, owesSearch: false)
        return [search(), .schedule(.window, at: end)]
    }

    /// Whatever the window owed is paid by this search, which is for the latest query.
    private mutating func search() -> ContactsFormAction {
        if case .open(let until, true) = window { window = .open(until: until, owesSearch: false) }
        latest = (latest.token + 1, query)
        return .search(query: query, token: latest.token)
    }
}
