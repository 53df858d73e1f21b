import Foundation
import Testing
import RosterSQLite

/// What `LoginFailureStore` offers beyond the storage boundary. Windows, pruning and durability are the storage
/// contract's, in `LoginFailureContractTests`.
@Suite struct LoginFailureStoreTests {
    @Test func countsAndTheOldestWithinTheWindowAndClearing() throws {
        let dir = try TemporaryDirectory()
        let failures = LoginFailureStore(database: try dir.rosterDatabase())
        for at in [100, 200, 300] as [Int64] {
            try failures.record(key: "account:alice1", at: at)
        }
        try failures.record(key: "uid:1000", at: 250)
        let all = try failures.failures(key: "account:alice1", since: 0)
        #expect(all.count == 3)
        #expect(all.oldest == 100)
        let recent = try failures.failures(key: "account:alice1", since: 200)
        #expect(recent.count == 2)
        #expect(recent.oldest == 200)
        let none = try failures.failures(key: "account:alice1", since: 301)
        #expect(none.count == 0)
        #expect(none.oldest == nil)
        try failures.clear(key: "account:alice1")
        #expect(try failures.failures(key: "account:alice1", since: 0).count == 0)
        #expect(try failures.failures(key: "uid:1000", since: 0).count == 1)
    }
}
