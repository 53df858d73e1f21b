// FailedLoginEntryCap — which failed-log-in entries are written to the audit log, and what each sums up, sans I/O.
//
// RULES
//   A storm of failed log-ins must not grow the audit log without bound, yet its size must stay known, and a
//   guess at a real account must never go unnamed. The requester is the peer uid (the one thing a peer cannot
//   choose) or the remote person a trusted gateway speaks for, by address, an IPv6 /64 as one.
//   • A failure on a real account is folded per requester and account: the first of a minute is written at once;
//     the rest of that minute are left out and counted, and the count is carried, as `suppressed`, by that
//     requester's next entry on the same account, or by one summary that names the account (`sweep`). So ten
//     wrong passwords on alice's account leave at least two entries naming alice, the last with the count, however
//     many made-up names the same requester tried before.
//   • A failure on no account (an unknown name, a bad token) goes through the requester's cap: the first
//     `perMinute` of a minute are written; the rest are left out and counted, the count carried by the requester's
//     next such entry, or by a nameless summary.
//   • Past `maxFolds` folds held at once (requesters × accounts failing within a minute), a failure on a real
//     account that has no fold yet goes through its requester's cap instead, as a failure on no account does: still
//     written with its account while the requester's minute has room, else counted in its summary. Never more
//     memory, never an unbounded log; only then may such an entry go unnamed.
//   The failure itself is always recorded for the rate limit: only its entry is left out.
//   A minute is a window opened by the first entry after the last one ended: one minute of the clock given, or
//   less when that clock steps back (the count carries over either way).
//
// THEORY OF OPERATION
//   One window per requester, and one per (requester, account), that wrote or left out an entry in its current
//   minute; `sweep` (every 10 s) forgets the windows that ended and sums up what they left out, so what is held is
//   bounded by the requesters failing within a minute (system users, which a peer cannot make up, and the remotes
//   that trusted gateways name) plus at most `maxFolds` folds; a window is a few dozen bytes and its account's
//   name. So the log holds at most `perMinute` + 1 entries a minute per requester and 2 per fold. `Peer` is what a
//   summary names besides the requester (the last peer left out: its pid, client and remote).

/// Decides, per requester (and account) and minute, which failed-log-in entries are written and what each sums up.
public struct FailedLoginEntryCap<Peer: Sendable>: Sendable {
    /// What to do with one failed-log-in entry.
    public enum Decision: Equatable, Sendable {
        /// Write it, with this many entries of the same requester (and account) left out just before it.
        case write(suppressed: Int)
        /// Leave it out; it is counted.
        case leaveOut
    }

    /// The entries a requester left out in a minute that ended with no entry written after them.
    public struct Summary: Sendable {
        /// The uid, or the remote's network (see `Requester.limitScope`).
        public let requester: Requester
        /// The real account they were on, for a fold; nil for the requester's cap.
        public let account: String?
        /// The last peer of that requester whose entry was left out.
        public let peer: Peer
        public let suppressed: Int
    }

    public static var windowMs: Int64 { 60_000 }

    /// Folds held at most: about 4,096 × (a 64-code-point name and a window), well under 2 MiB.
    public static var maxFolds: Int { 4_096 }

    /// `[Audit] FailedLoginEntriesPerMinute=`; a reload may change it, and the windows open keep their counts.
    public var perMinute: Int

    /// Entries written per requester and real account a minute before the rest are folded: 1, the first at once
    /// (a test that follows every entry of one account raises it).
    public var perAccountPerMinute = 1

    private struct Window: Sendable {
        var startMs: Int64
        var written = 0
        var leftOut = 0
        var lastLeftOut: Peer?
    }

    private struct Fold: Hashable, Sendable {
        let requester: Requester
        let account: String
    }

    private var windows: [Requester: Window] = [:]
    private var folds: [Fold: Window] = [:]

    public init(perMinute: Int) {
        self.perMinute = perMinute
    }

    /// Requesters with a window held, for tests of the memory bound.
    public var windowsHeld: Int { windows.count }

    /// (Requester, account) folds held, for tests of the memory bound.
    public var foldsHeld: Int { folds.count }

    /// The decision for one failed-log-in entry of `requester` at `nowMs` (Unix milliseconds), on the real account
    /// `account` (its canonical username), or on none.
    public mutating func admit(_ requester: Requester, account: String? = nil, peer: Peer, nowMs: Int64) -> Decision {
        let key = requester.limitScope
        if let account {
            let fold = Fold(requester: key, account: account)
            if folds[fold] != nil || folds.count < Self.maxFolds {
                return Self.admit(&folds[fold], allowed: perAccountPerMinute, peer: peer, nowMs: nowMs)
            }
        }
        return Self.admit(&windows[key], allowed: perMinute, peer: peer, nowMs: nowMs)
    }

    /// One entry through `slot`'s window (opened, or reopened once it ended), of which `allowed` a minute are written.
    private static func admit(_ slot: inout Window?, allowed: Int, peer: Peer, nowMs: Int64) -> Decision {
        var window = slot.map { ended($0, nowMs) ? Window(startMs: nowMs, leftOut: $0.leftOut, lastLeftOut: $0.lastLeftOut) : $0 }
            ?? Window(startMs: nowMs)
        defer { slot = window }
        guard window.written < allowed else {
            window.leftOut += 1
            window.lastLeftOut = peer
            return .leaveOut
        }
        window.written += 1
        let suppressed = window.leftOut
        window.leftOut = 0
        window.lastLeftOut = nil
        return .write(suppressed: suppressed)
    }

    /// The summaries of every window that ended at `nowMs` with a count left, which it clears, by requester's key
    /// and then account (the requester's cap first); every ended window is forgotten.
    public mutating func sweep(nowMs: Int64) -> [Summary] {
        var summaries: [Summary] = []
        for (requester, window) in windows where Self.ended(window, nowMs) {
            if window.leftOut > 0, let peer = window.lastLeftOut {
                summaries.append(Summary(requester: requester, account: nil, peer: peer, suppressed: window.leftOut))
            }
            windows[requester] = nil
        }
        for (fold, window) in folds where Self.ended(window, nowMs) {
            if window.leftOut > 0, let peer = window.lastLeftOut {
                summaries.append(Summary(requester: fold.requester, account: fold.account, peer: peer,
                                         suppressed: window.leftOut))
            }
            folds[fold] = nil
        }
        return summaries.sorted {
            ($0.requester.limitKey, $0.account ?? "") < ($1.requester.limitKey, $1.account ?? "")
        }
    }

    private static func ended(_ window: Window, _ nowMs: Int64) -> Bool {
        nowMs < window.startMs || nowMs - window.startMs >= windowMs
    }
}
