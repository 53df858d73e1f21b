// ContactIndexes — every logged-in user's contact search index as the loop holds it, and the loads under way.
//
// RULES
//   • A user's index is loaded once, off the loop. A request that finds no index starts the load; requests that
//     find one under way wait for it, in the order they came, at most `waiterLimit` per user; past that they are
//     refused (the caller answers `busy`). Other users' requests never wait for it.
//   • A write answered while a load is out is not lost. The storage keeps a user's load in order with their
//     writes, so such a write was made before the load and its snapshot holds it; but the loop does not depend on
//     that order (a backend that reads the snapshot on another connection, or lets a load pass queued imports,
//     may answer a write its snapshot missed first). Every change sets one contact's keys, or its absence,
//     outright, and one user's writes are answered in the order they committed, so replaying every change
//     answered during the load on its snapshot, in order, leaves each contact as its last write left it: a change
//     the snapshot holds is set again to the same value, and one it missed is set. A write answered after the
//     load's answer finds the index ready and changes it.
//   • The index only ever follows what a write answered (`StoredContact` carries its keys): no row is read after
//     a write, so no failed read can leave a written contact out of the index.
//   • A failed load is not kept: its waiters get the failure, and the next request loads again.
//   • Released while loading (nobody is logged in as the user any more): the result still answers its waiters,
//     but it is not kept, unless a request came meanwhile.
//   • Invalidated (another writer changed the user's contacts, or changes may have been missed): a loaded index
//     is dropped; a load under way may have read its snapshot before that change, so its result is neither kept
//     nor handed out: the load starts again for the same waiters, with the changes recorded so far dropped (the
//     new snapshot is read after they were answered, so it holds them).
//
// A plain value without clock or I/O: the service starts the loads and answers the waiters it hands back.

import RosterCore
import RosterStorage

/// A change one answered write made to a user's contacts, as the search index sees it.
enum ContactIndexChange {
    case upsert([ContactIndexEntry])
    case remove(Int64)
}

/// The loaded indexes, the loads under way and their waiters; see the rules above.
struct ContactIndexes<Waiter> {
    /// What a request for a user's index found.
    enum Admission {
        /// The index is loaded; the request was not queued.
        case ready(ContactIndex)
        /// Nothing was loaded or loading: the caller must start the load now. The request waits for it.
        case startLoad
        /// A load is under way; the request waits for it.
        case waiting
        /// Too many requests wait for this user's load already; the request was not queued.
        case refused
    }

    private struct Load {
        var waiters: [Waiter]
        /// Changes answered since the load began, in the order they were answered.
        var changes: [ContactIndexChange] = []
        var released = false
        /// Invalidated while out: its snapshot may miss another writer's change.
        var stale = false
    }

    let waiterLimit: Int
    private var ready: [AccountID: ContactIndex] = [:]
    private var loads: [AccountID: Load] = [:]

    init(waiterLimit: Int) {
        self.waiterLimit = waiterLimit
    }

    /// A request for `user`'s index.
    mutating func request(_ user: AccountID, _ waiter: Waiter) -> Admission {
        if let index = ready[user] { return .ready(index) }
        guard loads[user] != nil else {
            loads[user] = Load(waiters: [waiter])
            return .startLoad
        }
        guard loads[user]?.waiters.count ?? 0 < waiterLimit else { return .refused }
        loads[user]?.waiters.append(waiter)
        loads[user]?.released = false
        return .waiting
    }

    /// The load of `user`'s index answered: the waiters to answer, in order, and what to answer them with (the
    /// loaded index with every change answered meanwhile replayed on it, or the failure).
    mutating func loaded<Failure: Error>(_ user: AccountID, _ result: Result<ContactIndex, Failure>)
        -> (waiters: [Waiter], result: Result<ContactIndex, Failure>) {
        guard let load = loads.removeValue(forKey: user) else { return ([], result) }
        guard case .success(var index) = result else { return (load.waiters, result) }
        for change in load.changes { index.apply(change) }
        if !load.released { ready[user] = index }
        return (load.waiters, .success(index))
    }

    /// A write of `user`'s contacts was answered.
    mutating func changed(_ user: AccountID, _ change: ContactIndexChange) {
        if ready[user] != nil {
            ready[user]?.apply(change)
        } else {
            loads[user]?.changes.append(change)
        }
    }

    /// Nobody is logged in as `user` any more: the index is dropped, to be loaded again when needed.
    mutating func release(_ user: AccountID) {
        ready[user] = nil
        loads[user]?.released = true
    }

    /// Another writer changed `user`'s contacts; see the rules above.
    mutating func invalidate(_ user: AccountID) {
        ready[user] = nil
        loads[user]?.stale = true
    }

    /// Changes may have been missed for anyone: every index is invalidated.
    mutating func invalidateAll() {
        ready = [:]
        for user in loads.keys { loads[user]?.stale = true }
    }

    /// Call when a load of `user`'s index answers, before `loaded`: true when the load was invalidated while out,
    /// in which case it is under way again (same waiters, nothing recorded) and the caller must start it anew.
    mutating func restartIfStale(_ user: AccountID) -> Bool {
        guard loads[user]?.stale == true else { return false }
        loads[user]?.stale = false
        loads[user]?.changes = []
        return true
    }

    /// Whether `user`'s index is loaded (for tests and figures).
    func isReady(_ user: AccountID) -> Bool { ready[user] != nil }

    /// Whether a load of `user`'s index is under way.
    func isLoading(_ user: AccountID) -> Bool { loads[user] != nil }
}

extension ContactIndex {
    mutating func apply(_ change: ContactIndexChange) {
        switch change {
        case .upsert(let entries): upsert(contentsOf: entries)
        case .remove(let id): remove(id: id)
        }
    }
}
