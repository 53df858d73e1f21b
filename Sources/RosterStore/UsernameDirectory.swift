/// Every canonical username in memory, so an availability check is a hash lookup instead of a SQLite read with
/// its WAL locks and three syscalls (issue 8). It is filled from the store after READY, on a worker, so start-up
/// stays fast; until then, and if filling fails, the database answers. Owned by the loop thread (`SQLiteStorage`).
///
/// It stays in step because this daemon is the database's only writer, and accounts are only ever added: a
/// registration is noted here when its commit is answered on the loop. One that commits while the snapshot is
/// read is noted as pending, so it counts whether or not the snapshot saw it.
struct UsernameDirectory {
    enum Phase: String {
        case loading
        case ready
        case failed
    }

    private var names: Set<String> = []
    private var pending: [String] = []
    private(set) var phase = Phase.loading

    /// Whether `canonical` is taken, or nil when the directory cannot tell yet and the store must be asked.
    func contains(_ canonical: String) -> Bool? {
        phase == .ready ? names.contains(UsernameKey.folded(canonical)) : nil
    }

    /// The number of accounts, or nil before the directory is filled.
    var count: Int? { phase == .ready ? names.count : nil }

    /// An account was committed.
    mutating func add(_ canonical: String) {
        switch phase {
        case .ready: names.insert(UsernameKey.folded(canonical))
        case .loading: pending.append(UsernameKey.folded(canonical))
        case .failed: break
        }
    }

    /// The store's snapshot arrived; registrations answered meanwhile are merged in.
    mutating func fill(with snapshot: Set<String>) {
        guard phase == .loading else { return }
        names = snapshot
        names.formUnion(pending)
        pending = []
        phase = .ready
    }

    /// Reading the snapshot failed: the store keeps answering every check.
    mutating func fillFailed() {
        pending = []
        phase = .failed
    }
}
