import RosterRuntime
import Testing
@testable import RosterServer

/// A connection as the table sees it: a number and a peer.
private final class Member: ConnectionTableMember {
    let id: UInt64
    let peer: PeerCredentials

    init(_ id: UInt64, uid: UInt32) {
        self.id = id
        peer = PeerCredentials(pid: 1, uid: uid, gid: uid)
    }
}

/// The open connections and what the limits count, without a socket.
@Suite("The connection table")
struct ConnectionTableTests {
    @Test func numbersAreNeverReusedEvenForAConnectionThatNeverOpened() {
        let table = ConnectionTable<Member>()
        #expect([table.takeID(), table.takeID(), table.takeID()] == [1, 2, 3])
        let first = Member(3, uid: 1000)
        table.insert(first)
        table.remove(first)
        #expect(table.takeID() == 4)
    }

    @Test func countsEachPeerUIDAndForgetsAUIDThatHasNoneLeft() {
        let table = ConnectionTable<Member>()
        let a = Member(1, uid: 1000), b = Member(2, uid: 1000), c = Member(3, uid: 0)
        for member in [a, b, c] { table.insert(member) }
        #expect(table.count == 3 && table.count(uid: 1000) == 2 && table.count(uid: 0) == 1)
        #expect(table[2] === b && table[9] == nil)
        #expect(table.remove(a))
        #expect(!table.remove(a), "a second close is no close")
        #expect(table.count(uid: 1000) == 1 && table.count == 2)
        #expect(table.remove(b) && table.remove(c))
        #expect(table.isEmpty && table.count(uid: 1000) == 0 && table.values.isEmpty)
    }

    @Test func theTotalLimitIsJudgedBeforeThePeersOwn() {
        let table = ConnectionTable<Member>()
        #expect(table.admission(uid: 1000, maxConnections: 2, maxPerUID: 1) == .admitted)
        table.insert(Member(1, uid: 1000))
        #expect(table.admission(uid: 1000, maxConnections: 2, maxPerUID: 1) == .refused(limit: 1))
        #expect(table.admission(uid: 1001, maxConnections: 2, maxPerUID: 1) == .admitted)
        table.insert(Member(2, uid: 1001))
        #expect(table.admission(uid: 1000, maxConnections: 2, maxPerUID: 1) == .refused(limit: 2))
        #expect(table.admission(uid: 1002, maxConnections: 2, maxPerUID: 1) == .refused(limit: 2))
    }
}
