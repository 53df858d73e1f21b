import Foundation
import Testing
import RosterStore

@Suite struct LoginFailureStoreTests {
    @Test func countsWithinTheWindow() throws {
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
        #expect(try failures.failures(key: "account:nobody", since: 0).count == 0)
        #expect(try failures.failureTimes(key: "account:alice1", since: 150) == [200, 300])
    }

    @Test func pruneAndClear() throws {
        let dir = try TemporaryDirectory()
        let failures = LoginFailureStore(database: try dir.rosterDatabase())
        try failures.record(key: "account:a", at: 10)
        try failures.record(key: "account:a", at: 20)
        try failures.record(key: "account:b", at: 15)
        #expect(try failures.prune(olderThan: 20) == 2)
        #expect(try failures.failures(key: "account:a", since: 0).count == 1)
        #expect(try failures.failures(key: "account:b", since: 0).count == 0)
        try failures.record(key: "account:b", at: 30)
        try failures.clear(key: "account:a")
        #expect(try failures.failures(key: "account:a", since: 0).count == 0)
        #expect(try failures.failures(key: "account:b", since: 0).count == 1)
    }

    @Test func survivesCloseAndReopen() throws {
        let dir = try TemporaryDirectory()
        do {
            let db = try dir.rosterDatabase()
            let failures = LoginFailureStore(database: db)
            for at in 1...10 as ClosedRange<Int64> {
                try failures.record(key: "account:alice1", at: at * 1_000)
            }
            db.close()
        }
        let failures = LoginFailureStore(database: try dir.rosterDatabase())
        let window = try failures.failures(key: "account:alice1", since: 0)
        #expect(window.count == 10)
        #expect(window.oldest == 1_000)
    }
}
