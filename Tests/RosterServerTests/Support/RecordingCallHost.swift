import RosterCore
import RosterProtocol
import RosterRuntime
import Testing
@testable import RosterServer

/// A connection as a call sees it, recording everything the call does to it in order.
final class RecordingCallHost: ContactsCallHost {
    enum Event: Equatable {
        case reserved(Int)
        case released(Int)
        case answered
        case answer(String, id: JSONValue)
        case error(RosterError, id: JSONValue)
        case finished
        case authChangeEnded
    }

    let id: UInt64
    let session = Session()
    let peer: PeerCredentials
    let closedFlag = Locked(false)
    var maxAnswerBytes = 1 << 20
    private(set) var history: [Event] = []

    init(id: UInt64 = 5, uid: UInt32 = 1000) {
        self.id = id
        peer = PeerCredentials(pid: 42, uid: uid, gid: uid)
    }

    func sendAnswer(_ bytes: [UInt8], id: JSONValue) { history.append(.answer(String(decoding: bytes, as: UTF8.self), id: id)) }
    func sendError(_ error: RosterError, id: JSONValue) { history.append(.error(error, id: id)) }
    func reserveOutput(_ bytes: Int) { history.append(.reserved(bytes)) }
    func releaseOutput(_ bytes: Int) { history.append(.released(bytes)) }
    func requestAnswered() { history.append(.answered) }
    func requestFinished() { history.append(.finished) }
    func authChangeEnded() {
        // What waits behind a log-in is served only once the session no longer counts it as running.
        #expect(session.authChangesRunning == 0)
        history.append(.authChangeEnded)
    }
}
