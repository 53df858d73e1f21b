// MailPeerLimit — how many mails one requester may have sent a minute, sans I/O (protocol.md §Email).
//
// RULES
//   A requester is counted as the log-in limits count one (`Requester.limitScope`): a connection by its peer uid,
//   and the person a trusted gateway speaks for by their address (an IPv6 /64 as one), so a gateway's browsers
//   are each their own requester, not all of them the gateway's uid.
//   Each requester may have `perMinute` (10) mails sent within any `window` (a sliding minute); the next is
//   refused with the wait until the oldest of those leaves the window (at least 1 ms).
//   An admitted mail counts from the moment it is admitted, whatever becomes of it.
//   What is held is bounded: at most `perMinute` times per requester, and at most `maxRequesters` requesters;
//   `sweep` forgets those with nothing left in the window. A requester new when the table is full (after a
//   sweep) shares one overflow count with every other such requester: never more memory, and a flood from
//   many addresses limits itself rather than the requesters already counted.
//   Times are the loop's monotonic `Instant`: the count lives in this daemon's memory only (the per-account
//   limit, which must hold across daemons, is the outbox's own).

/// The per-requester limit on mails sent: 10 a minute, sliding.
public struct MailPeerLimit: Sendable {
    /// Whether a mail may be sent now, or how long until it may.
    public enum Decision: Equatable, Sendable {
        case allowed
        case limited(retryAfterMs: Int64)
    }

    /// Mails a requester may have sent within one window.
    public static let perMinute = 10
    public static let window: Duration = .seconds(60)
    /// Requesters counted apart at most (a few dozen bytes each).
    public static let maxRequesters = 4_096

    private var sent: [Requester: [Instant]] = [:]
    private var overflow: [Instant] = []

    public init() {}

    /// Requesters counted apart now, for tests of the memory bound.
    public var requestersHeld: Int { sent.count }

    /// Admits one mail of `requester` at `now`, counting it, or says how long until one would be admitted.
    public mutating func admit(_ requester: Requester, now: Instant) -> Decision {
        let key = requester.limitScope
        if sent[key] == nil, sent.count >= Self.maxRequesters { sweep(now: now) }
        if sent[key] == nil, sent.count >= Self.maxRequesters { return Self.admit(&overflow, now: now) }
        return Self.admit(&sent[key, default: []], now: now)
    }

    /// Forgets every requester with no mail left in the window at `now`.
    public mutating func sweep(now: Instant) {
        sent = sent.filter { !Self.recent($0.value, now: now).isEmpty }
        overflow = Self.recent(overflow, now: now)
    }

    private static func admit(_ times: inout [Instant], now: Instant) -> Decision {
        times = recent(times, now: now)
        guard times.count >= perMinute, let oldest = times.first else {
            times.append(now)
            return .allowed
        }
        return .limited(retryAfterMs: max(1, (oldest + window - now).millisecondsRoundedUp))
    }

    /// The times still in the window that ends at `now`; a time after `now` (which a monotonic clock never
    /// gives) counts as recent.
    private static func recent(_ times: [Instant], now: Instant) -> [Instant] {
        times.filter { now - $0 < window }
    }
}
