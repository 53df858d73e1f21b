import RosterCore
import RosterStorage
import RosterTestSupport
import Testing
@testable import RosterServer

/// The loop's search indexes: one load per user, its waiters in order and bounded, and no answered write lost
/// while the load is out.
@Suite("Contact indexes and their loads")
struct ContactIndexesTests {
    private struct LoadFailed: Error, Equatable {}

    private static func keys(_ name: String) -> ContactSearchKeys { ContactSearchKeys(name: name, phone: nil) }

    private static func entry(_ id: Int64, _ name: String) -> ContactIndexEntry { (id: id, keys: keys(name)) }

    private static let names = ["Ann", "Bo", "Cy", "Di", "Ed"]

    /// The whole list, and what a search for each name finds: what a client can see of the index.
    private static func listing(_ index: ContactIndex) -> [[Int64]] {
        [index.list(limit: 1_000, offset: 0).ids] + names.map { index.search(query: $0, limit: 1_000, offset: 0).ids }
    }

    private static func index(_ contacts: [Int64: String]) -> ContactIndex {
        ContactIndex(contacts.map { (id: $0.key, keys: keys($0.value)) })
    }

    @Test func oneLoadServesEveryWaiterInTheOrderTheyCame() {
        var indexes = ContactIndexes<Int>(waiterLimit: 8)
        #expect(indexes.request(1, 10).isStartLoad)
        #expect(indexes.request(1, 11).isWaiting)
        #expect(indexes.request(1, 12).isWaiting)
        // Another user's request is not held up by this load: it starts its own.
        #expect(indexes.request(2, 20).isStartLoad)
        let loaded = indexes.loaded(1, Result<ContactIndex, LoadFailed>.success(Self.index([5: "Ann"])))
        #expect(loaded.waiters == [10, 11, 12])
        #expect(loaded.result.map { $0.list(limit: 10, offset: 0).ids } == .success([5]))
        guard case .ready(let index) = indexes.request(1, 13) else {
            Issue.record("a loaded index is not handed out at once")
            return
        }
        #expect(index.list(limit: 10, offset: 0).ids == [5])
        #expect(indexes.isLoading(2) && !indexes.isReady(2))
    }

    @Test func pastTheWaiterLimitRequestsAreRefusedAndTheLoadIsNotStartedAgain() {
        var indexes = ContactIndexes<Int>(waiterLimit: 3)
        #expect(indexes.request(1, 0).isStartLoad)
        #expect(indexes.request(1, 1).isWaiting)
        #expect(indexes.request(1, 2).isWaiting)
        for extra in 3..<6 { #expect(indexes.request(1, extra).isRefused) }
        #expect(indexes.request(2, 0).isStartLoad, "one user's waiters do not count against another's")
        let loaded = indexes.loaded(1, Result<ContactIndex, LoadFailed>.success(ContactIndex()))
        #expect(loaded.waiters == [0, 1, 2])
    }

    @Test func aFailedLoadAnswersItsWaitersAndIsNotKept() {
        var indexes = ContactIndexes<Int>(waiterLimit: 8)
        _ = indexes.request(1, 0)
        _ = indexes.request(1, 1)
        indexes.changed(1, .upsert([Self.entry(3, "Bo")]))
        let loaded = indexes.loaded(1, Result<ContactIndex, LoadFailed>.failure(LoadFailed()))
        #expect(loaded.waiters == [0, 1])
        #expect(loaded.result.map(\.count) == .failure(LoadFailed()))
        #expect(!indexes.isReady(1) && !indexes.isLoading(1))
        #expect(indexes.request(1, 2).isStartLoad, "the next request loads again")
    }

    @Test func anIndexReleasedWhileItLoadsAnswersItsWaitersButIsNotKept() {
        var indexes = ContactIndexes<Int>(waiterLimit: 8)
        _ = indexes.request(1, 0)
        indexes.release(1)
        let loaded = indexes.loaded(1, Result<ContactIndex, LoadFailed>.success(Self.index([1: "Al"])))
        #expect(loaded.waiters == [0])
        #expect(loaded.result.map(\.count) == .success(1))
        #expect(!indexes.isReady(1))

        // Asked for again before the load answered (a new log-in): it is kept after all.
        _ = indexes.request(2, 0)
        indexes.release(2)
        #expect(indexes.request(2, 1).isWaiting)
        _ = indexes.loaded(2, Result<ContactIndex, LoadFailed>.success(ContactIndex()))
        #expect(indexes.isReady(2))
    }

    @Test func writesFollowTheLoadedIndexAndAreDroppedOnRelease() {
        var indexes = ContactIndexes<Int>(waiterLimit: 8)
        // Nothing loaded: a write has nothing to change, and the next load reads it from the storage.
        indexes.changed(1, .upsert([Self.entry(1, "Al")]))
        #expect(indexes.request(1, 0).isStartLoad)
        _ = indexes.loaded(1, Result<ContactIndex, LoadFailed>.success(Self.index([1: "Al"])))
        indexes.changed(1, .upsert([Self.entry(2, "Bea")]))
        indexes.changed(1, .remove(1))
        guard case .ready(let index) = indexes.request(1, 1) else {
            Issue.record("not ready")
            return
        }
        #expect(index.list(limit: 10, offset: 0).ids == [2])
        indexes.release(1)
        #expect(indexes.request(1, 2).isStartLoad)
    }

    /// The rule of writes answered while the index loads, over every interleaving of a few writes: the load starts
    /// after write `start` was answered, reads its snapshot after write `snapshot` committed (at least every write
    /// answered before it started), and answers after write `answer` was answered. Whatever the three, once every
    /// write is answered the index lists exactly what the storage holds.
    @Test func noAnsweredWriteIsLostWhileTheIndexLoads() {
        var random = SplitMix64(seed: 13)
        for round in 0..<40 {
            // A user's writes in the order the storage committed (and so answered) them.
            var writes: [(change: ContactIndexChange, id: Int64, name: String?)] = []
            for _ in 0..<6 {
                let id = Int64.random(in: 1...4, using: &random)
                if Bool.random(using: &random) {
                    let name = Self.names.randomElement(using: &random) ?? "Ann"
                    writes.append((.upsert([Self.entry(id, name)]), id, name))
                } else {
                    writes.append((.remove(id), id, nil))
                }
            }
            func stored(after count: Int) -> [Int64: String] {
                var contacts: [Int64: String] = [:]
                for write in writes.prefix(count) { contacts[write.id] = write.name }
                return contacts
            }
            let expected = Self.listing(Self.index(stored(after: writes.count)))
            for start in 0...writes.count {
                for snapshot in start...writes.count {
                    for answer in start...writes.count {
                        var indexes = ContactIndexes<Int>(waiterLimit: 8)
                        for (number, write) in writes.enumerated() {
                            if number == start { #expect(indexes.request(1, 0).isStartLoad) }
                            if number == answer {
                                _ = indexes.loaded(1, Result<ContactIndex, LoadFailed>.success(Self.index(stored(after: snapshot))))
                            }
                            indexes.changed(1, write.change)
                        }
                        if start == writes.count { _ = indexes.request(1, 0) }
                        if answer == writes.count {
                            _ = indexes.loaded(1, Result<ContactIndex, LoadFailed>.success(Self.index(stored(after: snapshot))))
                        }
                        guard case .ready(let index) = indexes.request(1, 1) else {
                            Issue.record("round \(round): not ready")
                            continue
                        }
                        #expect(Self.listing(index) == expected,
                                "round \(round): load after \(start), snapshot after \(snapshot), answered after \(answer)")
                    }
                }
            }
        }
    }
}

extension ContactIndexes.Admission {
    var isStartLoad: Bool { if case .startLoad = self { true } else { false } }
    var isWaiting: Bool { if case .waiting = self { true } else { false } }
    var isRefused: Bool { if case .refused = self { true } else { false } }
}
