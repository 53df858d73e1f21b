import CLinux
import Glibc
import RosterCore
import RosterProtocol
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Testing
@testable import RosterServer

/// A connection's environment that records what the connection asks of it, on an embedded loop. What a line
/// does is the test's to say (`onLine`); by default it is answered at once with `echo:` and the line.
private final class RecordingEnvironment: ConnectionEnvironment {
    let loop = EmbeddedEventLoop()
    let log = KeptLog()
    let logger: Logger
    let readBuffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 65_536)
    var isStopping = false
    /// Everything the connection asked, in order, each as a short line.
    var history: [String] = []
    var budget = 0
    var answered = 0
    var onLine: (String, Connection) -> Void = { line, connection in
        connection.sendReply(Array("echo:\(line)\n".utf8))
    }

    init() {
        logger = Logger(level: .debug, sink: log)
    }

    deinit { readBuffer.deallocate() }

    var eventLoop: any EventLoopProtocol { loop }

    func dispatch(line: UnsafeBufferPointer<UInt8>, from connection: Connection) {
        let text = String(decoding: line, as: UTF8.self)
        history.append("line \(text)")
        onLine(text, connection)
    }

    func rejectOversizedLine(from connection: Connection) {
        history.append("too large")
    }

    func sendError(_ error: RosterError, id: JSONValue, to connection: Connection) {
        history.append("error \(error.reason)")
        connection.sendReply(Array("error:\(error.reason)\n".utf8))
    }

    func requestAnswered() { answered += 1 }

    func authChangeEnded(on connection: Connection) {}

    func outputQueuedChanged(uid: UInt32, by delta: Int) { budget += delta }

    func isOutputBudgetSpent(uid: UInt32) -> Bool { false }

    func outputDrained(_ connection: Connection) { history.append("drained") }

    func connectionClosed(_ connection: Connection) { history.append("closed") }
}

/// A connection on one end of a socketpair, its peer on the other, both on the recording environment's loop.
private final class Pair {
    let environment = RecordingEnvironment()
    let connection: Connection
    let peer: Int32
    private var peerOpen = true

    init(_ settings: ServerSettings = ServerSettings(), heldLines: HeldLineBytes = HeldLineBytes()) throws {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw SystemError(errno: errno, call: "socketpair")
        }
        for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        peer = fds[1]
        connection = Connection(id: 7, fd: fds[0], peer: PeerCredentials(pid: 1, uid: 1_000, gid: 1_000),
                                session: Session(), maxLineBytes: settings.maxLineBytes, settings: settings,
                                environment: environment, heldLines: heldLines)
        try connection.start()
    }

    deinit {
        if peerOpen { close(peer) }
        connection.close()
    }

    var loop: EmbeddedEventLoop { environment.loop }

    func send(_ text: String) {
        _ = text.withCString { Glibc.send(peer, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
    }

    /// What the connection wrote that the peer has not read yet.
    func received() -> String {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4_096)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(peer, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether the connection's end is closed, as the peer sees it: a read says end of stream.
    var peerSeesEndOfStream: Bool {
        var byte: UInt8 = 0
        return recv(peer, &byte, 1, Int32(MSG_PEEK)) == 0
    }

    func shutDownPeerWrites() {
        shutdown(peer, Int32(SHUT_WR))
    }

    func closePeer() {
        close(peer)
        peerOpen = false
    }
}

private let readable = EPOLLIN.rawValue | EPOLLRDHUP.rawValue

@Suite("Connection on an embedded loop")
struct ConnectionTests {
    /// The answers to a whole read leave in one write after its last line: an answer queued while a line is
    /// being served (a fact that arrives while the machine's actions run) waits for the serve to end, and the
    /// turn's end writes them all.
    @Test func answersQueuedWhileLinesAreServedLeaveTogetherAfterTheTurn() throws {
        let pair = try Pair()
        var unsentWhenServed: [Int] = []
        var peerHadWhenServed: [String] = []
        let echo = pair.environment.onLine
        pair.environment.onLine = { line, connection in
            unsentWhenServed.append(connection.unsentBytes)
            peerHadWhenServed.append(pair.received())
            echo(line, connection)
        }
        pair.send("a\nbb\nccc\n")
        #expect(pair.loop.runOnce() == 1)
        #expect(pair.environment.history == ["line a", "line bb", "line ccc"])
        #expect(unsentWhenServed == [0, 7, 15])
        #expect(peerHadWhenServed == ["", "", ""])
        #expect(pair.received() == "echo:a\necho:bb\necho:ccc\n")
        #expect(pair.connection.unsentBytes == 0)
        #expect(pair.loop.interest(of: pair.connection.fd) == readable)
        #expect(pair.environment.budget == 0)
    }

    /// The server closes the connection while one of its lines is served: the close waits for the serve to
    /// end, then the rest of the read is never served, what was queued is dropped, and the server hears once.
    @Test func aCloseFedWhileALineIsServedTakesEffectWhenTheServeEnds() throws {
        let pair = try Pair()
        var closedInsideServe: Bool?
        let echo = pair.environment.onLine
        pair.environment.onLine = { line, connection in
            echo(line, connection)
            guard line == "bb" else { return }
            connection.close()
            closedInsideServe = connection.isClosed
        }
        pair.send("a\nbb\nccc\n")
        pair.loop.runOnce()
        #expect(closedInsideServe == false)
        #expect(pair.connection.isClosed)
        #expect(pair.connection.closedFlag.withLock { $0 })
        #expect(pair.environment.history == ["line a", "line bb", "closed"])
        #expect(pair.received() == "")
        #expect(pair.peerSeesEndOfStream)
        #expect(pair.loop.interest(of: pair.connection.fd) == nil)
    }

    /// A peer that hangs up while its call runs on a worker: the connection closes, and the call's answer,
    /// arriving later, is dropped cleanly, with what it had reserved given back to the budget.
    @Test func aCallAnsweredAfterThePeerHungUpIsDroppedCleanly() throws {
        let pair = try Pair()
        var call: RequestCall<Connection>?
        let params = try Params(validating: [], against: [])
        pair.environment.onLine = { _, connection in
            connection.requestStarted()
            let started = RequestCall(id: .int(1), params: params, connection: connection)
            started.reserveOutput(500)
            call = started
        }
        pair.send("slow\n")
        pair.closePeer()
        // The first read takes the line; a hang-up while the peer is still read is left to the next read,
        // which sees the end of the stream: then nobody is left to read the answer.
        pair.loop.runOnce()
        #expect(!pair.connection.isClosed)
        #expect(pair.environment.budget == 500)
        pair.loop.runOnce()
        #expect(pair.connection.isClosed)
        #expect(pair.environment.history == ["line slow", "closed"])
        #expect(pair.environment.budget == 0)
        let late = try #require(call)
        late.succeed(.string("too late"))
        #expect(pair.environment.history == ["line slow", "closed"])
        #expect(pair.environment.answered == 1)
        #expect(pair.environment.budget == 0)
        #expect(pair.connection.inFlight == 0)
    }

    /// A half-closed peer still gets the answer to what it sent: the connection waits for it, writes it, then
    /// closes.
    @Test func aHalfClosedPeerGetsItsAnswerThenTheConnectionCloses() throws {
        let pair = try Pair()
        var answer: (() -> Void)?
        pair.environment.onLine = { line, connection in
            connection.requestStarted()
            answer = {
                connection.sendReply(Array("late:\(line)\n".utf8))
                connection.requestFinished()
            }
        }
        pair.send("slow\n")
        pair.shutDownPeerWrites()
        // The line, then the end of the stream on the next read.
        pair.loop.runOnce()
        pair.loop.runOnce()
        #expect(!pair.connection.isClosed)
        #expect(pair.loop.interest(of: pair.connection.fd) == 0)
        let answerNow = try #require(answer)
        answerNow()
        #expect(pair.received() == "late:slow\n")
        #expect(pair.connection.isClosed)
        #expect(pair.peerSeesEndOfStream)
        #expect(pair.environment.history == ["line slow", "closed"])
    }

    /// Back-pressure on a real socket: with one request allowed in flight, the next line is held and reading
    /// stops (no EPOLLIN); the answer reopens the gate, and the held line is served on the next turn of the
    /// loop, before anything read later.
    @Test func aHeldLineIsServedOnTheNextTurnOnceTheGateOpens() throws {
        var settings = ServerSettings()
        settings.maxRequestsInFlight = 1
        let pair = try Pair(settings)
        var answerSlow: (() -> Void)?
        let echo = pair.environment.onLine
        pair.environment.onLine = { line, connection in
            guard line == "slow" else { return echo(line, connection) }
            connection.requestStarted()
            answerSlow = {
                connection.sendReply(Array("done:slow\n".utf8))
                connection.requestFinished()
            }
        }
        pair.send("slow\nfast\n")
        pair.loop.runOnce()
        #expect(pair.environment.history == ["line slow"])
        #expect(pair.connection.isReadPaused)
        #expect(pair.loop.interest(of: pair.connection.fd) == 0)
        pair.send("later\n")
        #expect(pair.loop.runOnce() == 0)
        let answerSlowNow = try #require(answerSlow)
        answerSlowNow()
        #expect(pair.received() == "done:slow\n")
        #expect(pair.environment.history == ["line slow"])
        // The held line goes on the next turn, then reading resumes and finds `later`.
        pair.loop.runOnce()
        #expect(pair.environment.history == ["line slow", "line fast"])
        #expect(pair.loop.interest(of: pair.connection.fd) == readable)
        pair.loop.runOnce()
        #expect(pair.environment.history == ["line slow", "line fast", "line later"])
        #expect(pair.received() == "echo:fast\necho:later\n")
    }

    /// Half a line left unfinished closes the connection after `IdleLineTimeout=`, to the millisecond, on the
    /// manual clock.
    @Test func aPeerThatLeavesALineUnfinishedIsCutOffAtTheTimeout() throws {
        let pair = try Pair()
        let timeout = ServerSettings().idleLineTimeout
        pair.send("{\"half")
        pair.loop.runOnce()
        pair.loop.advance(by: timeout - .milliseconds(1))
        #expect(!pair.connection.isClosed)
        pair.loop.advance(by: .milliseconds(1))
        #expect(pair.connection.isClosed)
        #expect(pair.environment.log.messages == ["closing a connection that left a line unfinished for \(timeout)"])
        #expect(pair.environment.log.kept.first?.fields["ROSTER_CONNECTION"] == "7")
    }

    /// The loop refuses to change what it watches on the socket: the connection closes, and says why.
    @Test func aFailedEpollModifyClosesTheConnectionWithALogLine() throws {
        var settings = ServerSettings()
        settings.maxRequestsInFlight = 1
        let pair = try Pair(settings)
        pair.environment.onLine = { _, connection in connection.requestStarted() }
        pair.loop.failNextModify = SystemError(errno: ENOMEM, call: "epoll_ctl(MOD)")
        // The second line finds the gate closed: dropping EPOLLIN is what fails.
        pair.send("first\nsecond\n")
        pair.loop.runOnce()
        #expect(pair.connection.isClosed)
        #expect(pair.environment.history == ["line first", "closed"])
        #expect(pair.environment.log.messages
                == ["closing a connection whose socket the loop can no longer watch: epoll_ctl(MOD): Cannot allocate memory"])
    }

    /// A line past `MaxLineBytes=` is answered once, the rest of it skipped, and the next line served.
    @Test func anOversizedLineIsRejectedAndTheNextOneServed() throws {
        var settings = ServerSettings()
        settings.maxLineBytes = 16
        let pair = try Pair(settings)
        pair.send(String(repeating: "x", count: 40) + "\nok\n")
        pair.loop.runOnce()
        #expect(pair.environment.history == ["too large", "line ok"])
        #expect(pair.received() == "echo:ok\n")
    }

    /// protocol.md §Framing: a logged-in connection takes lines up to MaxSessionLineBytes=, and what all connections'
    /// unfinished long lines hold together is bounded: past it a line is answered busy and dropped, the others go on.
    @Test func longLinesOfLoggedInSessionsShareOneBudget() throws {
        var settings = ServerSettings(maxLineBytes: 16, maxSessionLineBytes: 1_000)
        settings.maxHeldLineBytes = 100
        let held = HeldLineBytes()
        let first = try Pair(settings, heldLines: held)
        let second = try Pair(settings, heldLines: held)
        let stranger = try Pair(settings, heldLines: held)
        for pair in [first, second] {
            pair.connection.session.user = Account(id: 1, username: "alice1", display: "alice1", email: nil, createdAtMs: 0)
        }
        stranger.send(String(repeating: "s", count: 40) + "\n")
        stranger.loop.runOnce()
        #expect(stranger.environment.history == ["too large"])

        first.send(String(repeating: "a", count: 80))
        first.loop.runOnce()
        #expect(held.bytes == 64)
        second.send(String(repeating: "b", count: 80))
        second.loop.runOnce()
        #expect(second.environment.history == ["error busy"])
        #expect(held.bytes == 64)
        // The rest of the refused line is dropped up to its newline; the next line is served.
        second.send("bbb\nok\n")
        second.loop.runOnce()
        #expect(second.environment.history == ["error busy", "line ok"])
        // The first line ends, and its bytes go back to the budget.
        first.send("\n")
        first.loop.runOnce()
        #expect(first.environment.history == ["line " + String(repeating: "a", count: 80)])
        #expect(held.bytes == 0)
        second.send(String(repeating: "c", count: 80) + "\n")
        second.loop.runOnce()
        #expect(second.environment.history.last == "line " + String(repeating: "c", count: 80))
    }
}
