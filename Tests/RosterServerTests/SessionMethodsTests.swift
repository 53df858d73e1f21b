import RosterCore
import RosterProtocol
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Testing
@testable import RosterServer

/// `session.*` and `rpc.describe` on an in-memory storage, with no server and no socket; a log-in for the
/// log-out to end is made by the account methods over the same storage.
@Suite("Session methods on an in-memory storage")
struct SessionMethodsTests {
    let storage = InMemoryStorage()
    let sessions = RecordingSessions(policy: .seed)
    let methods: SessionMethods<RecordingSessions>
    let accountMethods: AccountMethods<RecordingSessions>

    init() {
        let accounts = AccountProcedures(storage: storage, passwords: FakePasswordWork(), policy: .seed,
                                         logger: Logger(level: .emerg), secrets: testSecrets)
        methods = SessionMethods(accounts: accounts, sessions: sessions)
        accountMethods = AccountMethods(accounts: accounts, sessions: sessions)
    }

    private func call(_ method: String, id: Int64, _ params: [(String, JSONValue)] = [],
                      on host: RecordingCallHost) throws -> RequestCall<RecordingCallHost> {
        let specs = SessionMethods<RecordingSessions>.table.map(\.spec) + AccountMethods<RecordingSessions>.table.map(\.spec)
        let spec = try #require(specs.first { $0.name == method })
        return RequestCall(id: .int(id), params: try Params(validating: params, against: spec.params), connection: host)
    }

    private func answer(_ id: Int, _ result: String) -> RecordingCallHost.Event {
        .answer(#"{"jsonrpc":"2.0","id":\#(id),"result":\#(result)}"# + "\n", id: .int(Int64(id)))
    }

    private var greeting: String {
        #""server":"\#(RosterVersion.server)","version":"\#(RosterVersion.version)","protocol":1"#
    }

    @Test func helloSetsTheLanguageAndTimingsAndAnswersWhatNowHolds() throws {
        let host = RecordingCallHost()
        methods.hello(try call("session.hello", id: 1, [
            ("locale", "en"), ("client", "test/1"), ("timing", .object([("debounce_ms", 120), ("throttle_ms", 40)])),
        ], on: host))
        #expect(host.history == [
            .answered, answer(1, #"{\#(greeting),"locale":"en","timing":{"debounce_ms":120,"throttle_ms":40}}"#),
            .finished,
        ])
        #expect(host.session.locale == .en && host.session.client == "test/1" && host.session.greeted)
        #expect(host.session.debounceOverride == .milliseconds(120) && host.session.throttleOverride == .milliseconds(40))
    }

    @Test func helloWithoutTimingsAnswersThePolicysAndAnUnknownLanguageChangesNothing() throws {
        let host = RecordingCallHost()
        methods.hello(try call("session.hello", id: 1, [("locale", "xx-YY")], on: host))
        methods.hello(try call("session.hello", id: 2, on: host))
        let debounce = Policy.seed.debounce.nanoseconds / 1_000_000
        let throttle = Policy.seed.throttle.nanoseconds / 1_000_000
        #expect(host.history == [
            .answered, .error(.invalidParams(param: "locale", problem: .unsupportedLocale), id: .int(1)), .finished,
            .answered, answer(2, #"{\#(greeting),"locale":"\#(RosterLocale.default.rawValue)","timing":"#
                                 + #"{"debounce_ms":\#(debounce),"throttle_ms":\#(throttle)}}"#), .finished,
        ])
    }

    private func helloAnswer(_ id: Int, remote: String? = nil) -> RecordingCallHost.Event {
        let debounce = Policy.seed.debounce.nanoseconds / 1_000_000
        let throttle = Policy.seed.throttle.nanoseconds / 1_000_000
        let tail = remote.map { #","remote":"\#($0)""# } ?? ""
        return answer(id, #"{\#(greeting),"locale":"en","timing":{"debounce_ms":\#(debounce),"throttle_ms":\#(throttle)}\#(tail)}"#)
    }

    @Test func aTrustedPeerNamesTheRemoteOnceInCanonicalFormAndKeepsIt() throws {
        sessions.trustedUIDs = [0, 1000]
        let host = RecordingCallHost()
        methods.hello(try call("session.hello", id: 1, [("locale", "en"), ("remote", "2001:DB8:0:0::1")], on: host))
        // Omitted or the same again keeps it; another is refused and changes nothing.
        methods.hello(try call("session.hello", id: 2, [("client", "roster-web")], on: host))
        methods.hello(try call("session.hello", id: 3, [("remote", "2001:db8::1")], on: host))
        methods.hello(try call("session.hello", id: 4, [("remote", "2001:db8::2"), ("locale", "ko")], on: host))
        #expect(host.history == [
            .answered, helloAnswer(1, remote: "2001:db8::1"), .finished,
            .answered, helloAnswer(2, remote: "2001:db8::1"), .finished,
            .answered, helloAnswer(3, remote: "2001:db8::1"), .finished,
            .answered, .error(.forbidden, id: .int(4)), .finished,
        ])
        #expect(host.session.remote == RemoteAddress(parsing: "2001:db8::1") && host.session.locale == .en)
        #expect(host.auditPeer == AuditPeer(uid: 1000, pid: 42, client: nil, remote: "2001:db8::1"))
        #expect(host.queueCharge.payer == .remote(try #require(RemoteAddress(parsing: "2001:db8::"))))
    }

    @Test func anUntrustedPeerIsForbiddenARemoteAndNothingOfItsHelloApplies() throws {
        sessions.trustedUIDs = [0]
        let host = RecordingCallHost(uid: 1000)
        methods.hello(try call("session.hello", id: 1, [("locale", "ko"), ("client", "evil"),
                                                       ("timing", .object([("debounce_ms", 5)])),
                                                       ("remote", "203.0.113.5")], on: host))
        // Judged as a peer before as an address: the text is not even read.
        methods.hello(try call("session.hello", id: 2, [("remote", "not an address")], on: host))
        #expect(host.history == [
            .answered, .error(.forbidden, id: .int(1)), .finished,
            .answered, .error(.forbidden, id: .int(2)), .finished,
        ])
        #expect(host.session.remote == nil && host.session.locale == .default && host.session.client == nil)
        #expect(host.session.debounceOverride == nil && !host.session.greeted)
        #expect(host.auditPeer == AuditPeer(uid: 1000, pid: 42, client: nil, remote: nil))
        #expect(host.queueCharge.payer == .peer(1000))
    }

    @Test func aRemoteThatIsNoAddressIsRefusedByName() throws {
        let host = RecordingCallHost(uid: 0)
        for (id, literal) in ["203.0.113.5:80", "[::1]", "fe80::1%eth0", "01.2.3.4", ""].enumerated() {
            methods.hello(try call("session.hello", id: Int64(id), [("remote", .string(literal)), ("locale", "ko")],
                                   on: host))
            let refusal = RecordingCallHost.Event.error(.invalidParams(param: "remote", problem: .notAnAddress),
                                                        id: .int(Int64(id)))
            #expect(Array(host.history.suffix(2)) == [refusal, .finished], "\(literal)")
        }
        #expect(host.session.remote == nil && host.session.locale == .default)
    }

    /// A `client` too long (in Unicode scalars) or holding a control or bidi character is refused by name, and
    /// nothing else of that hello (locale, remote, timing) applies.
    @Test func aClientTooLongOrWithAControlCharacterIsRefusedAndNothingApplies() throws {
        let host = RecordingCallHost(uid: 0)
        let refused: [(String, ParamProblem)] = [
            (String(repeating: "x", count: 129), .tooLong), ("e" + String(repeating: "\u{301}", count: 128), .tooLong),
            ("a\nb", .controlCharacter), ("\u{1B}[8m", .controlCharacter), ("a\u{202E}b", .controlCharacter),
            ("a\u{9B}b", .controlCharacter), ("a\u{7F}", .controlCharacter), ("a\u{2069}", .controlCharacter),
        ]
        for (id, (text, problem)) in refused.enumerated() {
            methods.hello(try call("session.hello", id: Int64(id), [("client", .string(text)), ("locale", "ko"),
                                                                    ("remote", "203.0.113.5"),
                                                                    ("timing", ["debounce_ms": 10])], on: host))
            let refusal = RecordingCallHost.Event.error(.invalidParams(param: "client", problem: problem), id: .int(Int64(id)))
            #expect(Array(host.history.suffix(2)) == [refusal, .finished], "\(text.debugDescription)")
        }
        #expect(host.session.client == nil && host.session.remote == nil && host.session.locale == .default)
        #expect(host.session.debounceOverride == nil && !host.session.greeted)
        methods.hello(try call("session.hello", id: 99, [("client", .string(String(repeating: "张", count: 128)))], on: host))
        #expect(host.session.client == String(repeating: "张", count: 128) && host.session.greeted)
    }

    @Test func whoamiNamesTheAccountOrNobody() throws {
        let host = RecordingCallHost()
        methods.whoami(try call("session.whoami", id: 1, on: host))
        host.session.user = Account(id: 7, username: "grace1", display: "Grace1", email: "grace@example.com", createdAtMs: 0)
        methods.whoami(try call("session.whoami", id: 2, on: host))
        #expect(host.history == [
            .answered, answer(1, #"{"user":null}"#), .finished,
            .answered, answer(2, #"{"user":{"username":"grace1","email":"grace@example.com"}}"#), .finished,
        ])
    }

    @Test func logoutRevokesTheTokenForEveryoneThenLogsThisSessionOut() throws {
        let first = RecordingCallHost(id: 1)
        accountMethods.register(try call("users.register", id: 1, [("username", "grace1"), ("password", "secret1")],
                                         on: first))
        accountMethods.logIn(try call("auth.login", id: 2, [("username", "grace1"), ("password", "secret1")], on: first))
        guard case .answer(let line, _) = first.history[4] else {
            Issue.record("no log-in answer in \(first.history)")
            return
        }
        let token = try #require(try JSONParser.parse(Array(line.utf8.dropLast()))["result"]?["token"]?.stringValue)
        let hash = try #require(first.session.tokenHash)

        methods.logout(try call("session.logout", id: 3, on: first))
        #expect(Array(first.history.dropFirst(7)) == [.answered, answer(3, "{}"), .finished, .authChangeEnded])
        #expect(sessions.endings == [.tokenRevoked(hash, except: 1), .loggedOut(host: 1)])
        #expect(first.session.user == nil)

        // The token is gone from the storage too: it resumes nothing any more.
        let later = RecordingCallHost(id: 2)
        accountMethods.resume(try call("session.resume", id: 4, [("token", .string(token))], on: later))
        #expect(later.history == [.answered, .error(.notFound, id: .int(4)), .finished, .authChangeEnded])
    }

    @Test func logoutWithoutATokenLogsOutWithoutRevokingAnything() throws {
        let host = RecordingCallHost(id: 3)
        methods.logout(try call("session.logout", id: 1, on: host))
        #expect(host.history == [.answered, answer(1, "{}"), .finished, .authChangeEnded])
        #expect(sessions.endings == [.loggedOut(host: 3)])
    }

    @Test func describeListsWhatTheServerOffers() throws {
        let host = RecordingCallHost()
        sessions.methodSpecs = AccountMethods<RecordingSessions>.table.map(\.spec).sorted { $0.name < $1.name }
        methods.describe(try call("rpc.describe", id: 1, on: host))
        guard case .answer(let line, _) = host.history[1] else {
            Issue.record("no answer in \(host.history)")
            return
        }
        let result = try JSONParser.parse(Array(line.utf8.dropLast()))["result"]
        #expect(result?["protocol"] == 1)
        #expect(result?["methods"]?.arrayValue?.compactMap { $0["name"]?.stringValue }
                == ["auth.login", "session.resume", "users.check_username", "users.register"])
    }
}
