import RosterRuntime
/// Unsent output of every connection together, and per peer uid: the global side of back-pressure.
///
/// A per-connection mark alone let 150 connections of one uid, each pipelining `contacts.list {limit:1000}` without
/// reading, take the daemon from 682 MiB to 4.8 GB. Each connection reports every change of its queue
/// here; while a budget is spent, connections holding output stop being read (see `ReadGate`) and a request for a
/// big answer is answered `busy`.
struct OutputBudget {
    private(set) var total = 0
    private var byUID: [UInt32: Int] = [:]

    /// Bytes queued for the connections of `uid`.
    func queued(uid: UInt32) -> Int { byUID[uid] ?? 0 }

    mutating func adjust(uid: UInt32, by delta: Int) {
        guard delta != 0 else { return }
        total += delta
        let now = (byUID[uid] ?? 0) + delta
        byUID[uid] = now > 0 ? now : nil
    }

    /// Whether the total or `uid`'s share has reached its limit.
    func isSpent(uid: UInt32, totalLimit: Int, perUIDLimit: Int) -> Bool {
        total >= totalLimit || queued(uid: uid) >= perUIDLimit
    }
}
