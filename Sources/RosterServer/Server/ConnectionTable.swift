import RosterRuntime

/// What the connection table needs of a connection: its number and its peer.
protocol ConnectionTableMember: AnyObject {
    var id: UInt64 { get }
    var peer: PeerCredentials { get }
}

/// The open connections by number, and how many each peer uid holds: what `[Server] MaxConnections=` and
/// `MaxConnectionsPerUID=` count. Numbers are never reused, so work queued for a closed connection cannot reach
/// a newer one.
final class ConnectionTable<Member: ConnectionTableMember> {
    /// Whether one more connection may be taken, or the limit it would pass.
    enum Admission: Equatable {
        case admitted
        case refused(limit: Int)
    }

    private var members: [UInt64: Member] = [:]
    private var perUID: [UInt32: Int] = [:]
    private var nextID: UInt64 = 1

    var count: Int { members.count }
    var isEmpty: Bool { members.isEmpty }
    var values: Dictionary<UInt64, Member>.Values { members.values }

    subscript(id: UInt64) -> Member? { members[id] }

    /// The open connections of peer uid `uid`.
    func count(uid: UInt32) -> Int { perUID[uid, default: 0] }

    /// Whether a connection of `uid` may be taken under the limits: the total is judged first, so a refusal
    /// names the limit the daemon as a whole reached before a peer's own.
    func admission(uid: UInt32, maxConnections: Int, maxPerUID: Int) -> Admission {
        if members.count >= maxConnections { return .refused(limit: maxConnections) }
        if count(uid: uid) >= maxPerUID { return .refused(limit: maxPerUID) }
        return .admitted
    }

    /// A fresh number, taken whether or not the connection it was taken for opens.
    func takeID() -> UInt64 {
        defer { nextID += 1 }
        return nextID
    }

    func insert(_ member: Member) {
        members[member.id] = member
        perUID[member.peer.uid, default: 0] += 1
    }

    /// False when `member` was not (or no longer) in the table.
    @discardableResult
    func remove(_ member: Member) -> Bool {
        guard members.removeValue(forKey: member.id) != nil else { return false }
        let remaining = perUID[member.peer.uid, default: 1] - 1
        perUID[member.peer.uid] = remaining > 0 ? remaining : nil
        return true
    }
}
