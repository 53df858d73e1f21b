/// Who a log-in attempt, a failed entry or queued work before a log-in is counted against: the connection's peer
/// uid, or the remote person a trusted gateway speaks for on it (see `RemoteAddress`).
public enum Requester: Hashable, Sendable {
    case uid(UInt32)
    case remote(RemoteAddress)

    /// `remote` when the connection has one, else its uid.
    public init(uid: UInt32, remote: RemoteAddress?) {
        self = remote.map { .remote($0) } ?? .uid(uid)
    }

    /// The failure count's key: `uid:1000`, or the remote's (`remote:203.0.113.5`, `remote:2001:db8::/64`).
    public var limitKey: String {
        switch self {
        case .uid(let uid): "uid:\(uid)"
        case .remote(let address): address.limitKey
        }
    }

    /// The requester limits count under: the same uid, or the remote's network (an IPv6 /64 is one subscriber).
    public var limitScope: Requester {
        switch self {
        case .uid: self
        case .remote(let address): .remote(address.limitNetwork)
        }
    }
}
