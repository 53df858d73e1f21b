import RosterCore
import RosterRuntime
import RosterStorage
import Testing

/// Failed log-ins: recorded per key at the backend's now, read back within a window (the last `windowMs`,
/// as `LoginRateLimit.windowStart` counts it), oldest first, kept across instances, pruned once out of the window.
@Suite("Storage contract: failed log-ins")
struct LoginFailureContractTests {
    @Test(arguments: BackendKind.allCases)
    func failuresCountWithinTheWindowPerKey(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let start = backend.clock.nowMs()
        for _ in 0..<3 {
            try backend.value { storage.acting(for: peerCharge).recordFailure(keys: ["account:alice1", "uid:1000"],
                                                                              completion: $0) }
            backend.clock.advance(byMs: 100)
        }
        try backend.value { storage.acting(for: peerCharge).recordFailure(keys: ["uid:1000"], completion: $0) }
        // Now is start + 300: the window of 250 ms starts at start + 51.
        let recent = try backend.value {
            storage.acting(for: peerCharge).recentFailures(keys: ["account:alice1", "uid:1000", "account:nobody"],
                                                           windowMs: 250, completion: $0)
        }
        #expect(recent.nowMs == start + 300)
        #expect(recent.times["account:alice1"] == [start + 100, start + 200])
        #expect(recent.times["uid:1000"] == [start + 100, start + 200, start + 300])
        #expect(recent.times["account:nobody"] ?? [] == [])
        // A window of exactly 300 ms no longer holds the first failure; one of 301 does.
        let exact = try backend.value { storage.acting(for: peerCharge).recentFailures(keys: ["account:alice1"],
                windowMs: 300, completion: $0) }
        #expect(exact.times["account:alice1"] == [start + 100, start + 200])
        let wider = try backend.value { storage.acting(for: peerCharge).recentFailures(keys: ["account:alice1"],
                windowMs: 301, completion: $0) }
        #expect(wider.times["account:alice1"] == [start, start + 100, start + 200])
    }

    @Test(arguments: BackendKind.allCases)
    func recordedFailuresAreThereForTheNextInstance(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let start = backend.clock.nowMs()
        for _ in 0..<10 {
            try backend.value { backend.storage.acting(for: peerCharge).recordFailure(keys: ["account:bob"],
                    completion: $0) }
            backend.clock.advance(byMs: 1_000)
        }
        let reopened = try backend.reopened()
        let recent = try backend.value { reopened.acting(for: peerCharge).recentFailures(keys: ["account:bob"],
                windowMs: 60_000, completion: $0) }
        #expect(recent.times["account:bob"] == (0..<10).map { start + Int64($0) * 1_000 })
    }

    @Test(arguments: BackendKind.allCases)
    func pruningDropsWhatIsOlderThanTheWindowOnly(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let start = backend.clock.nowMs()
        try backend.value { storage.acting(for: peerCharge).recordFailure(keys: ["account:a"], completion: $0) }
        backend.clock.advance(byMs: 10)
        try backend.value { storage.acting(for: peerCharge).recordFailure(keys: ["account:a", "account:b"],
                                                                          completion: $0) }
        backend.clock.advance(byMs: 10)
        // Now is start + 20; a window of 10 ms keeps what is 10 ms old.
        storage.pruneExpired(failureWindowMs: 10, tokenIdleMs: 60_000)
        try backend.settle()
        let left = try backend.value { storage.acting(for: peerCharge).recentFailures(keys: ["account:a", "account:b"],
                windowMs: .max / 2, completion: $0) }
        #expect(left.times["account:a"] == [start + 10])
        #expect(left.times["account:b"] == [start + 10])
    }
}
