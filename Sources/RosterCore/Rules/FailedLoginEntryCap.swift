// FailedLoginEntryCap — how many failed-log-in entries one requester may write to the audit log per minute, sans I/O.
//
// RULES
//   A storm of failed log-ins must not grow the audit log without bound (issue 16), yet its size must stay
//   known. So, per requester (the peer uid, the one thing a peer cannot choose; or the remote person a trusted
//   gateway speaks for, by address, an IPv6 /64 as one), the first `perMinute` failed-log-in entries of a minute
//   are written; the rest are left out and counted (the failure itself is still recorded for the rate limit: only
//   its entry goes). A written entry carries, as `suppressed`, the count left out before it, which
//   starts again from 0. A minute that ended with a count still left is summed up by `sweep`, once, so a storm
//   that stops leaves its size in the log too.
//   The minute is a window opened by the requester's first entry after the last one ended: one minute of the
//   clock given, or less when that clock steps back (the count carries over either way).
//
// THEORY OF OPERATION
//   One window per requester that wrote or left out an entry in its current minute; `sweep` forgets the windows
//   that ended, so what is held is bounded by the requesters failing within a minute: system users, which a peer
//   cannot make up, and the remotes that trusted gateways name (the uids `[Server] GatewayUsers=` trusts to say
//   whom they speak for; a window is a few dozen bytes). `Peer` is what a summary names besides the requester
//   (the last peer left out: its pid, client and remote).

/// Decides, per requester and minute, which failed-log-in entries are written and what each summarizes.
public struct FailedLoginEntryCap<Peer: Sendable>: Sendable {
    /// What to do with one failed-log-in entry.
    public enum Decision: Equatable, Sendable {
        /// Write it, with this many entries of the requester left out just before it.
        case write(suppressed: Int)
        /// Leave it out; it is counted.
        case leaveOut
    }

    /// The entries a requester left out in a minute that ended with no entry written after them.
    public struct Summary: Sendable {
        /// The uid, or the remote's network (see `Requester.limitScope`).
        public let requester: Requester
        /// The last peer of that requester whose entry was left out.
        public let peer: Peer
        public let suppressed: Int
    }

    public static var windowMs: Int64 { 60_000 }

    /// `[Audit] FailedLoginEntriesPerMinute=`; a reload may change it, and the windows open keep their counts.
    public var perMinute: Int

    private struct Window: Sendable {
        var startMs: Int64
        var written = 0
        var leftOut = 0
        var lastLeftOut: Peer?
    }

    private var windows: [Requester: Window] = [:]

    public init(perMinute: Int) {
        self.perMinute = perMinute
    }

    /// Requesters with a window held, for tests of the memory bound.
    public var windowsHeld: Int { windows.count }

    /// The decision for one failed-log-in entry of `requester` at `nowMs` (Unix milliseconds).
    public mutating func admit(_ requester: Requester, peer: Peer, nowMs: Int64) -> Decision {
        let key = requester.limitScope
        var window = windows[key].map { ended($0, nowMs) ? Window(startMs: nowMs, leftOut: $0.leftOut, lastLeftOut: $0.lastLeftOut) : $0 }
            ?? Window(startMs: nowMs)
        defer { windows[key] = window }
        guard window.written < perMinute else {
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

    /// The summaries of every window that ended at `nowMs` with a count left (by requester's key), which it clears;
    /// every ended window is forgotten.
    public mutating func sweep(nowMs: Int64) -> [Summary] {
        var summaries: [Summary] = []
        for (requester, window) in windows where ended(window, nowMs) {
            if window.leftOut > 0, let peer = window.lastLeftOut {
                summaries.append(Summary(requester: requester, peer: peer, suppressed: window.leftOut))
            }
            windows[requester] = nil
        }
        return summaries.sorted { $0.requester.limitKey < $1.requester.limitKey }
    }

    private func ended(_ window: Window, _ nowMs: Int64) -> Bool {
        nowMs < window.startMs || nowMs - window.startMs >= Self.windowMs
    }
}
