import Testing
@testable import RosterCore

@Suite("Failed-log-in audit entries per peer and minute")
struct FailedLoginEntryCapTests {
    /// The peer a summary names: here its pid.
    typealias Cap = FailedLoginEntryCap<Int32>

    /// `count` entries of `uid`, one millisecond apart from `startMs`, and what was decided for each.
    private func admit(_ cap: inout Cap, uid: UInt32 = 1000, count: Int, from startMs: Int64, pid: Int32 = 42) -> [Cap.Decision] {
        (0..<count).map { cap.admit(.uid(uid), peer: pid, nowMs: startMs + Int64($0)) }
    }

    @Test func theFirstOfAMinuteAreWrittenAndTheRestLeftOut() {
        var cap = Cap(perMinute: 10)
        let decisions = admit(&cap, count: 15, from: 1_000_000)
        #expect(decisions.prefix(10).allSatisfy { $0 == .write(suppressed: 0) })
        #expect(decisions.suffix(5).allSatisfy { $0 == .leaveOut })
    }

    @Test func theNextWrittenEntryCarriesTheCountLeftOutAndClearsIt() {
        var cap = Cap(perMinute: 10)
        let start: Int64 = 1_000_000
        _ = admit(&cap, count: 13, from: start)
        // Still the same minute: left out too.
        #expect(cap.admit(.uid(1000), peer: 42, nowMs: start + 59_999) == .leaveOut)
        #expect(cap.admit(.uid(1000), peer: 42, nowMs: start + 60_000) == .write(suppressed: 4))
        #expect(cap.admit(.uid(1000), peer: 42, nowMs: start + 60_001) == .write(suppressed: 0))
        // Nothing is left to sum up once an entry carried the count.
        #expect(cap.sweep(nowMs: start + 200_000).isEmpty)
    }

    @Test func eachUIDHasItsOwnMinute() {
        var cap = Cap(perMinute: 2)
        let start: Int64 = 5_000
        #expect(admit(&cap, uid: 1, count: 3, from: start) == [.write(suppressed: 0), .write(suppressed: 0), .leaveOut])
        #expect(admit(&cap, uid: 2, count: 2, from: start + 10) == [.write(suppressed: 0), .write(suppressed: 0)])
        // uid 2's minute opened 10 ms later: at uid 1's minute end it is still open.
        #expect(cap.admit(.uid(1), peer: 7, nowMs: start + 60_000) == .write(suppressed: 1))
        #expect(cap.admit(.uid(2), peer: 7, nowMs: start + 60_000) == .leaveOut)
    }

    @Test func aSweepSumsUpEveryMinuteThatEndedWithACountLeftOnce() {
        var cap = Cap(perMinute: 1)
        let start: Int64 = 1_000_000
        _ = admit(&cap, uid: 3, count: 4, from: start, pid: 30)
        _ = cap.admit(.uid(3), peer: 31, nowMs: start + 100)
        _ = admit(&cap, uid: 4, count: 1, from: start)
        _ = admit(&cap, uid: 5, count: 3, from: start + 30_000, pid: 50)
        // Before any minute ended, nothing; at uid 3's end, its summary only (uid 4 left nothing out).
        #expect(cap.sweep(nowMs: start + 59_999).isEmpty)
        let first = cap.sweep(nowMs: start + 60_000)
        #expect(first.map(\.requester) == [.uid(3)])
        #expect(first.first?.suppressed == 4)
        #expect(first.first?.peer == 31)
        #expect(cap.windowsHeld == 1)
        #expect(cap.sweep(nowMs: start + 60_001).isEmpty)
        let second = cap.sweep(nowMs: start + 90_000)
        #expect(second.map(\.requester) == [.uid(5)])
        #expect(second.first?.suppressed == 2)
        #expect(cap.windowsHeld == 0)
        // After a summary, uid 3 starts from nothing.
        #expect(cap.admit(.uid(3), peer: 30, nowMs: start + 120_000) == .write(suppressed: 0))
    }

    @Test func aClockSteppedBackEndsTheMinuteAndTheCountCarries() {
        var cap = Cap(perMinute: 1)
        let start: Int64 = 1_000_000
        _ = admit(&cap, count: 3, from: start)
        #expect(cap.admit(.uid(1000), peer: 42, nowMs: start - 5_000) == .write(suppressed: 2))
    }

    @Test func aReloadThatRaisesTheCapWritesAgainWithTheCount() {
        var cap = Cap(perMinute: 1)
        let start: Int64 = 1_000_000
        _ = admit(&cap, count: 3, from: start)
        cap.perMinute = 10
        #expect(cap.admit(.uid(1000), peer: 42, nowMs: start + 10) == .write(suppressed: 2))
    }

    /// Behind one gateway uid, each remote (an IPv6 /64 as one) has its own minute, apart from the uid's own.
    @Test func eachRemoteHasItsOwnMinuteAndASlash64IsOne() throws {
        var cap = Cap(perMinute: 2)
        let start: Int64 = 1_000_000
        let a = Requester.remote(try #require(RemoteAddress(parsing: "203.0.113.5")))
        let b = Requester.remote(try #require(RemoteAddress(parsing: "203.0.113.6")))
        let v6 = Requester.remote(try #require(RemoteAddress(parsing: "2001:db8:0:1::a")))
        let sameSlash64 = Requester.remote(try #require(RemoteAddress(parsing: "2001:db8:0:1:ffff::b")))
        #expect((0..<3).map { cap.admit(a, peer: 1, nowMs: start + Int64($0)) }
                == [.write(suppressed: 0), .write(suppressed: 0), .leaveOut])
        #expect(cap.admit(b, peer: 2, nowMs: start + 3) == .write(suppressed: 0))
        #expect(cap.admit(.uid(33), peer: 3, nowMs: start + 3) == .write(suppressed: 0))
        #expect(cap.admit(v6, peer: 4, nowMs: start + 4) == .write(suppressed: 0))
        #expect(cap.admit(sameSlash64, peer: 5, nowMs: start + 5) == .write(suppressed: 0))
        #expect(cap.admit(sameSlash64, peer: 6, nowMs: start + 6) == .leaveOut)
        let summaries = cap.sweep(nowMs: start + 60_006)
        #expect(summaries.map(\.requester.limitKey) == ["remote:2001:db8:0:1::/64", "remote:203.0.113.5"])
        #expect(summaries.map(\.peer) == [6, 1])
        #expect(summaries.map(\.suppressed) == [1, 1])
    }

    /// Ten made-up names spend the requester's cap, then ten wrong passwords on alice's account: the first is written
    /// at once and names her, the other nine are counted, and the minute's end sums them up under her name, however
    /// spent the requester's cap was.
    @Test func aFailureOnARealAccountIsFoldedPerRequesterAndAccountNotCapped() {
        var cap = Cap(perMinute: 10)
        let start: Int64 = 1_000_000
        #expect(admit(&cap, count: 10, from: start).allSatisfy { $0 == .write(suppressed: 0) })
        #expect(cap.admit(.uid(1000), peer: 42, nowMs: start + 10) == .leaveOut)
        let alice = (0..<10).map { cap.admit(.uid(1000), account: "alice1", peer: 40 + Int32($0), nowMs: start + 20 + Int64($0)) }
        #expect(alice == [.write(suppressed: 0)] + Array(repeating: .leaveOut, count: 9))
        // Another account of the same requester, and the same account from another requester, fold apart.
        #expect(cap.admit(.uid(1000), account: "bob123", peer: 42, nowMs: start + 40) == .write(suppressed: 0))
        #expect(cap.admit(.uid(2000), account: "alice1", peer: 42, nowMs: start + 40) == .write(suppressed: 0))
        #expect(cap.foldsHeld == 3 && cap.windowsHeld == 1)
        #expect(cap.sweep(nowMs: start + 59_999).isEmpty)
        let summaries = cap.sweep(nowMs: start + 60_020)
        #expect(summaries.map(\.requester) == [.uid(1000), .uid(1000)])
        #expect(summaries.map(\.account) == [nil, "alice1"])
        #expect(summaries.map(\.suppressed) == [1, 9])
        #expect(summaries.map(\.peer) == [42, 49])
        // bob123's and uid 2000's folds ended at start + 60_040: forgotten then, with nothing to sum up.
        #expect(cap.sweep(nowMs: start + 60_040).isEmpty)
        #expect(cap.foldsHeld == 0 && cap.windowsHeld == 0)
    }

    /// A fold's count not yet summed up rides on the next entry on that account once its minute ended; an IPv6 /64
    /// folds as one requester.
    @Test func theNextEntryOnTheAccountCarriesTheFoldsCount() throws {
        var cap = Cap(perMinute: 10)
        let start: Int64 = 1_000_000
        let a = Requester.remote(try #require(RemoteAddress(parsing: "2001:db8:0:1::a")))
        let b = Requester.remote(try #require(RemoteAddress(parsing: "2001:db8:0:1::b")))
        #expect(cap.admit(a, account: "alice1", peer: 1, nowMs: start) == .write(suppressed: 0))
        #expect(cap.admit(b, account: "alice1", peer: 2, nowMs: start + 1) == .leaveOut)
        #expect(cap.admit(a, account: "alice1", peer: 3, nowMs: start + 59_999) == .leaveOut)
        #expect(cap.admit(b, account: "alice1", peer: 4, nowMs: start + 60_000) == .write(suppressed: 2))
        #expect(cap.admit(b, account: "alice1", peer: 4, nowMs: start + 60_001) == .leaveOut)
        #expect(cap.sweep(nowMs: start + 120_000).map(\.suppressed) == [1])
    }

    /// The folds are bounded: past `maxFolds`, a failure on an account with no fold goes through its requester's cap
    /// (written while the cap has room, then counted), and an account that has one keeps folding. Once the sweep
    /// forgets the ended folds, new ones fold again.
    @Test func pastTheFoldBoundAFailureGoesThroughTheRequestersCap() {
        var cap = Cap(perMinute: 2)
        let start: Int64 = 1_000_000
        let first = (0..<Cap.maxFolds).map { cap.admit(.uid(UInt32($0 % 7)), account: "user\($0)", peer: 1, nowMs: start) }
        #expect(first.allSatisfy { $0 == .write(suppressed: 0) })
        #expect(cap.foldsHeld == Cap.maxFolds)
        let past = (0..<4).map { cap.admit(.uid(1000), account: "late\($0)", peer: 2, nowMs: start + 1) }
        #expect(past == [.write(suppressed: 0), .write(suppressed: 0), .leaveOut, .leaveOut])
        #expect(cap.foldsHeld == Cap.maxFolds && cap.windowsHeld == 1)
        #expect(cap.admit(.uid(0), account: "user0", peer: 3, nowMs: start + 2) == .leaveOut)
        let summaries = cap.sweep(nowMs: start + 60_001)
        #expect(summaries.filter { $0.account == nil }.map(\.suppressed) == [2])
        #expect(summaries.filter { $0.account == "user0" }.map(\.suppressed) == [1])
        #expect(cap.foldsHeld == 0)
        #expect(cap.admit(.uid(1000), account: "late0", peer: 2, nowMs: start + 60_002) == .write(suppressed: 0))
        #expect(cap.foldsHeld == 1)
    }
}
