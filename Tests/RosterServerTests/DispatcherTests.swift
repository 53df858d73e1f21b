import RosterCore
import RosterProtocol
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Testing
@testable import RosterServer

/// A connection as the dispatcher sees it: every line it is sent, in order, and the calls it owes answers.
final class LineHost: DispatchHost {
    let id: UInt64 = 1
    let session = Session()
    let peer = PeerCredentials(pid: 42, uid: 1000, gid: 1000)
    private(set) var inFlight = 0
    var isClosed = false
    /// Every line queued, as text without its newline.
    private(set) var lines: [String] = []
    /// Where a change of who the session is reports its end, as a connection tells its server.
    var onAuthChangeEnded: (LineHost) -> Void = { _ in }

    func sendReply(_ bytes: [UInt8]) { lines.append(Self.text(bytes)) }
    func sendLine(_ build: (inout [UInt8]) -> Void) {
        var line: [UInt8] = []
        build(&line)
        lines.append(Self.text(line))
    }
    func sendAnswer(_ bytes: [UInt8], id: JSONValue) { sendReply(bytes) }
    func sendError(_ error: RosterError, id: JSONValue) { lines.append("error \(error.reason)") }
    func reserveOutput(_ bytes: Int) {}
    func releaseOutput(_ bytes: Int) {}
    func requestAnswered() {}
    func requestStarted() { inFlight += 1 }
    func requestFinished() { inFlight -= 1 }
    func authChangeEnded() { onAuthChangeEnded(self) }

    func takeLines() -> [String] {
        defer { lines = [] }
        return lines
    }

    private static func text(_ bytes: [UInt8]) -> String {
        String(decoding: bytes.last == 10 ? bytes.dropLast() : bytes[...], as: UTF8.self)
    }
}

/// Three methods that show what the dispatcher does: one that is the same for anyone, one that reads who the
/// session is, and a log-in that changes it and answers only when the test says so.
final class ProbeGroup: MethodGroup {
    typealias Host = LineHost
    private(set) var served: [String] = []
    var logIns: [RequestCall<LineHost>] = []

    static var table: [MethodEntry<ProbeGroup>] {
        [
            MethodEntry(spec: MethodSpec("probe.echo", summary: "Anyone's.", params: [FieldSpec("text", .string)],
                                         result: .object([])),
                        handler: { $0.echo($1) }, dependence: .none),
            MethodEntry(spec: MethodSpec("probe.whoami", summary: "Who the session is.", result: .object([])),
                        handler: { $0.whoami($1) }),
            MethodEntry(spec: MethodSpec("probe.login", summary: "Changes who the session is.", result: .object([])),
                        handler: { $0.logIn($1) }),
        ]
    }

    func echo(_ call: RequestCall<LineHost>) {
        served.append("echo \(call.params.string("text") ?? "")")
        call.succeed([:])
    }

    func whoami(_ call: RequestCall<LineHost>) {
        served.append("whoami")
        call.succeed([:])
    }

    func logIn(_ call: RequestCall<LineHost>) {
        served.append("login")
        call.beginAuthChange()
        logIns.append(call)
    }
}

/// From a line to a method, with no socket: what is answered, what waits behind a log-in, and the plain lane.
@Suite("The dispatcher")
struct DispatcherTests {
    let storage = InMemoryStorage()
    let stats = ServerStats()
    let group = ProbeGroup()
    let host = LineHost()
    let dispatcher: Dispatcher<LineHost>

    init() {
        let accounts = AccountProcedures(storage: storage, passwords: FakePasswordWork(), policy: .seed,
                                         logger: Logger(level: .emerg), secrets: testSecrets)
        dispatcher = Dispatcher(plain: PlainRequests(storage: storage, accounts: accounts, stats: stats, policy: .seed),
                                policy: .seed, maxLineBytes: 4_096)
        dispatcher.register(group.methods)
        host.onAuthChangeEnded = { [dispatcher] host in dispatcher.authChangeEnded(on: host) }
    }

    private func send(_ line: String) {
        Array(line.utf8).withUnsafeBufferPointer { dispatcher.dispatch(line: $0, from: host) }
    }

    private func error(_ id: JSONValue, _ error: RosterError) -> String {
        String(decoding: RPCMessage.error(id: id, error, message: MessageCatalog.message(for: error, locale: .default))
            .dropLast(), as: UTF8.self)
    }

    private func result(_ id: Int64) -> String { #"{"jsonrpc":"2.0","id":\#(id),"result":{}}"# }

    @Test func listsEverySpecByName() {
        #expect(dispatcher.methodSpecs.map(\.name) == ["probe.echo", "probe.login", "probe.whoami"])
    }

    @Test func answersWhatIsNoRequestAndNeverANotification() {
        send(#"{"jsonrpc":"2.0","id":1,"method":"nope"}"#)
        send(#"{"jsonrpc":"2.0","method":"nope"}"#)
        send(#"{"jsonrpc":"2.0","id":2,"method":"probe.echo","params":{}}"#)
        send(#"{"jsonrpc":"2.0","method":"probe.echo","params":{}}"#)
        send(#"{"jsonrpc":"2.0","id":3,"method":"probe.echo","params":{"text":"hi"}}"#)
        var missing: RosterError = .internal
        do { _ = try Params(validating: [], against: ProbeGroup.table[0].spec.params) } catch { missing = error }
        #expect(host.takeLines() == [error(.int(1), .methodNotFound(method: "nope")), error(.int(2), missing), result(3)])
        #expect(group.served == ["echo hi"] && host.inFlight == 0)
    }

    @Test func anOversizedLineIsAnsweredWithTheLimitInForce() {
        dispatcher.rejectOversizedLine(from: host)
        dispatcher.maxLineBytes = 8_192
        dispatcher.rejectOversizedLine(from: host)
        #expect(host.takeLines() == [error(.null, .requestTooLarge(limit: 4_096)), error(.null, .requestTooLarge(limit: 8_192))])
    }

    @Test func behindALogInWhatDependsOnTheSessionWaitsAndEverythingAfterItToo() throws {
        send(#"{"jsonrpc":"2.0","id":1,"method":"probe.login"}"#)
        // The same for anyone, and nothing held before it: it goes ahead.
        send(#"{"jsonrpc":"2.0","id":2,"method":"probe.echo","params":{"text":"a"}}"#)
        send(#"{"jsonrpc":"2.0","id":3,"method":"probe.whoami"}"#)
        // Behind a held line, every line waits, whatever it is.
        send(#"{"jsonrpc":"2.0","id":4,"method":"probe.echo","params":{"text":"b"}}"#)
        #expect(group.served == ["login", "echo a"])
        #expect(host.takeLines() == [result(2)])
        #expect(host.session.held.count == 2 && dispatcher.heldRequestBytes > 0)
        #expect(host.inFlight == 3, "the log-in and the two held lines are owed answers")

        try #require(group.logIns.first).succeed([:])
        #expect(group.served == ["login", "echo a", "whoami", "echo b"])
        #expect(host.takeLines() == [result(1), result(3), result(4)])
        #expect(host.session.held.isEmpty && dispatcher.heldRequestBytes == 0 && host.inFlight == 0)
    }

    @Test func aClosedConnectionsHeldLinesGiveTheirBytesBack() {
        send(#"{"jsonrpc":"2.0","id":1,"method":"probe.login"}"#)
        send(#"{"jsonrpc":"2.0","id":2,"method":"probe.whoami"}"#)
        #expect(dispatcher.heldRequestBytes == #"{"jsonrpc":"2.0","id":2,"method":"probe.whoami"}"#.utf8.count)
        host.isClosed = true
        dispatcher.dropHeld(of: host)
        #expect(dispatcher.heldRequestBytes == 0 && host.session.held.isEmpty)
    }

    @Test func thePlainCheckUsernameIsAnsweredAsTheGeneralPathWouldAndCounted() throws {
        guard case .settled(let verdict) = RegisterRules.username("a", policy: .seed) else {
            Issue.record("a one-letter name is settled by the local rules")
            return
        }
        send(#"{"jsonrpc":"2.0","id":7,"method":"users.check_username","params":{"username":"a"}}"#)
        let general = RPCMessage.result(id: .int(7), UsernameCheckAnswer.result(verdict, locale: .default, policy: .seed))
        #expect(host.takeLines() == [String(decoding: general.dropLast(), as: UTF8.self)])
        #expect(stats.requestsServed == 1 && group.served.isEmpty)
        // A shape the plain lane does not take goes down the general path, where this table has no such method.
        send(#"{"jsonrpc":"2.0","id":8,"method":"users.check_username","params":{"username":1}}"#)
        #expect(host.takeLines() == [error(.int(8), .methodNotFound(method: "users.check_username"))])
    }
}
