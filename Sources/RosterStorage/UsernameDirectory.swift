/// Every canonical username in memory, so an availability check is a hash lookup instead of a database read,
/// even at a million accounts. It is filled from the database after READY, off the loop or in pages, so start-up
/// stays fast; until then, and if filling fails, the database answers. Owned by the loop thread (the backend's).
///
/// It stays in step because every account written is noted here when its commit is answered on the loop (by
/// this daemon, or by another one's notification on a shared database). One noted while the snapshot is read is
/// kept as pending, and replayed over the snapshot, so it counts whether or not the snapshot saw it. A refill
/// (after a backend may have missed notifications) keeps answering from the names it has until the new snapshot
/// is in.
public struct UsernameDirectory: Sendable {
    /// Whether checks are answered from memory yet.
    public enum Phase: String, Sendable {
        case loading
        case ready
        case failed
    }

    /// A change noted while a snapshot was being read, replayed over it in order.
    private enum Noted: Sendable {
        case added(String)
        case removed(String)
    }

    private var names: Set<String> = []
    private var pending: [Noted] = []
    /// Whether a snapshot is being read (the first fill or a refill): changes are noted as pending meanwhile.
    private var reading = true
    public private(set) var phase = Phase.loading

    public init() {}

    /// Whether `canonical` is taken, or nil when the directory cannot tell yet and the database must be asked.
    public func contains(_ canonical: String) -> Bool? {
        phase == .ready ? names.contains(UsernameKey.folded(canonical)) : nil
    }

    /// The number of accounts, or nil before the directory is filled.
    public var count: Int? { phase == .ready ? names.count : nil }

    /// An account was committed.
    public mutating func add(_ canonical: String) {
        note(.added(UsernameKey.folded(canonical)))
    }

    /// An account was deleted.
    public mutating func remove(_ canonical: String) {
        note(.removed(UsernameKey.folded(canonical)))
    }

    /// A new snapshot is about to be read: until `fill`, answers come from the names held (none while loading
    /// the first time), and changes are kept to replay over it.
    public mutating func beginRefill() {
        reading = true
        pending = []
        if phase == .failed { phase = .loading }
    }

    /// The database's snapshot arrived (folded keys); changes noted meanwhile are replayed over it. Consumed, so
    /// that the replay does not copy a million names the caller no longer needs.
    public mutating func fill(with snapshot: consuming Set<String>) {
        guard reading else { return }
        names = consume snapshot
        for change in pending { apply(change) }
        pending = []
        reading = false
        phase = .ready
    }

    /// Reading the snapshot failed: a first fill leaves every check to the database; a refill keeps the names
    /// it had, with what was noted meanwhile.
    public mutating func fillFailed() {
        guard reading else { return }
        reading = false
        if phase == .ready {
            for change in pending { apply(change) }
        } else {
            phase = .failed
        }
        pending = []
    }

    private mutating func note(_ change: Noted) {
        if reading { pending.append(change) }
        // A refill answers from the names it holds meanwhile, so they follow the change at once as well.
        if phase == .ready { apply(change) }
    }

    private mutating func apply(_ change: Noted) {
        switch change {
        case .added(let key): names.insert(key)
        case .removed(let key): names.remove(key)
        }
    }
}
