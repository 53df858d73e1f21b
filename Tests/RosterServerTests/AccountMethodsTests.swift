import RosterCore
import RosterProtocol
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Testing
@testable import RosterServer

/// `users.*`, `auth.login` and `session.resume` on an in-memory storage and fake password work, with no server
/// and no socket: each call's whole answer, as bytes, and what it did to the sessions.
@Suite("Account methods on an in-memory storage")
struct AccountMethodsTests {
    let storage = InMemoryStorage()
    let sessions = RecordingSessions(policy: .seed)
    let methods: AccountMethods<RecordingSessions>

    init() {
        let accounts = AccountProcedures(storage: storage, passwords: FakePasswordWork(), policy: .seed,
                                         logger: Logger(level: .emerg), secrets: testSecrets)
        methods = AccountMethods(accounts: accounts, sessions: sessions)
    }

    /// A call of `method` with `params`, validated against the method's spec in the server's table.
    private func call(_ method: String, id: Int64, _ params: [(String, JSONValue)],
                      on host: RecordingCallHost) throws -> RequestCall<RecordingCallHost> {
        let spec = try #require(AccountMethods<RecordingSessions>.table.first { $0.spec.name == method }?.spec)
        return RequestCall(id: .int(id), params: try Params(validating: params, against: spec.params), connection: host)
    }

    private func englishHost() -> RecordingCallHost {
        let host = RecordingCallHost()
        host.session.locale = .en
        return host
    }

    private func answer(_ id: Int, _ result: String) -> RecordingCallHost.Event {
        .answer(#"{"jsonrpc":"2.0","id":\#(id),"result":\#(result)}"# + "\n", id: .int(Int64(id)))
    }

    @Test func registeringAnswersTheNameAsKeptAndAnnouncesItButLogsNobodyIn() throws {
        let host = englishHost()
        methods.register(try call("users.register", id: 1, [("username", "Grace1"), ("password", "secret1")], on: host))
        #expect(host.history == [.answered, answer(1, #"{"username":"grace1"}"#), .finished])
        #expect(sessions.registered == ["grace1"])
        #expect(sessions.loggedIn.isEmpty)
        #expect(host.session.user == nil)
    }

    @Test func aNameTakenInAnyCaseIsRefusedAsTakenAndNotAnnouncedAgain() throws {
        let host = englishHost()
        methods.register(try call("users.register", id: 1, [("username", "grace1"), ("password", "secret1")], on: host))
        methods.register(try call("users.register", id: 2, [("username", "GRACE1"), ("password", "secret2")], on: host))
        #expect(Array(host.history.dropFirst(3)) == [.answered, .error(.taken(field: "username"), id: .int(2)), .finished])
        #expect(sessions.registered == ["grace1"])
    }

    @Test func checkingAUsernameAnswersTheRegisterRulesVerdictInTheSessionsLanguage() throws {
        let host = englishHost()
        methods.checkUsername(try call("users.check_username", id: 3, [("username", "grace1")], on: host))
        methods.register(try call("users.register", id: 4, [("username", "grace1"), ("password", "secret1")], on: host))
        host.session.locale = .zhHans
        methods.checkUsername(try call("users.check_username", id: 5, [("username", "Grace1")], on: host))
        #expect(host.history == [
            .answered, answer(3, #"{"state":"valid","code":"available","message":"The username is available"}"#),
            .finished,
            .answered, answer(4, #"{"username":"grace1"}"#), .finished,
            .answered, answer(5, #"{"state":"invalid","code":"taken","message":"用户名已存在"}"#), .finished,
        ])
    }

    @Test func loggingInBindsTheSessionToTheTokenItAnswersAndEndsAsAnAuthChange() throws {
        let host = englishHost()
        methods.register(try call("users.register", id: 1, [("username", "grace1"), ("password", "secret1")], on: host))
        methods.logIn(try call("auth.login", id: 2, [("username", "GRACE1"), ("password", "secret1")], on: host))
        let events = Array(host.history.dropFirst(3))
        guard events.count == 4, case .answer(let line, id: let answerID) = events[1], answerID == .int(2) else {
            Issue.record("unexpected history \(events)")
            return
        }
        #expect(events[0] == .answered && events[2] == .finished && events[3] == .authChangeEnded)
        let answer = try JSONParser.parse(Array(line.utf8.dropLast()))
        let token = try #require(answer["result"]?["token"]?.stringValue)
        #expect(answer["result"]?["username"] == "grace1")
        #expect(sessions.loggedIn.map(\.username) == ["grace1"])
        #expect(host.session.user?.username == "grace1")
        #expect(host.session.authChangesRunning == 0)

        // The token it answered resumes a session on another connection, bound to the same token.
        let other = englishHost()
        methods.resume(try call("session.resume", id: 3, [("token", .string(token))], on: other))
        #expect(other.history == [.answered, self.answer(3, #"{"username":"grace1"}"#), .finished, .authChangeEnded])
        #expect(sessions.loggedIn.count == 2 && sessions.loggedIn[0].tokenHash == sessions.loggedIn[1].tokenHash)
    }

    /// A reload changes the server's log level; the methods read the logger when they log, so the new level
    /// holds for groups built before it.
    @Test func aLogLevelSetAfterTheMethodsWereBuiltIsTheOneTheyLogAt() throws {
        let host = englishHost()
        methods.logIn(try call("auth.login", id: 1, [("username", "nobody1"), ("password", "secret1")], on: host))
        let lines = KeptLog()
        sessions.logger = Logger(level: .info, sink: lines)
        methods.logIn(try call("auth.login", id: 2, [("username", "nobody1"), ("password", "secret1")], on: host))
        #expect(lines.messages == ["log-in refused: not_found"])
    }

    /// The seed policy says which of the two was wrong (the hardened one does not; see FormFlowTests).
    @Test func aWrongPasswordOrAnUnknownNameIsRefusedAndLogsNobodyIn() throws {
        let host = englishHost()
        methods.register(try call("users.register", id: 1, [("username", "grace1"), ("password", "secret1")], on: host))
        methods.logIn(try call("auth.login", id: 2, [("username", "grace1"), ("password", "secret2")], on: host))
        methods.logIn(try call("auth.login", id: 3, [("username", "nobody1"), ("password", "secret1")], on: host))
        #expect(Array(host.history.dropFirst(3)) == [
            .answered, .error(.wrongPassword, id: .int(2)), .finished, .authChangeEnded,
            .answered, .error(.notFound, id: .int(3)), .finished, .authChangeEnded,
        ])
        #expect(sessions.loggedIn.isEmpty && host.session.user == nil)
    }

    @Test func aTokenRevokedWhileItsResumeRunsDoesNotBindASession() throws {
        let host = englishHost()
        methods.register(try call("users.register", id: 1, [("username", "grace1"), ("password", "secret1")], on: host))
        methods.logIn(try call("auth.login", id: 2, [("username", "grace1"), ("password", "secret1")], on: host))
        guard case .answer(let line, _) = host.history[4] else {
            Issue.record("no log-in answer in \(host.history)")
            return
        }
        let token = try #require(try JSONParser.parse(Array(line.utf8.dropLast()))["result"]?["token"]?.stringValue)
        let hash = try #require(sessions.loggedIn.first?.tokenHash)
        storage.answering = .onRelease
        let other = englishHost()
        methods.resume(try call("session.resume", id: 3, [("token", .string(token))], on: other))
        sessions.revocations.tokenRevoked(hash)
        _ = storage.releaseAll()
        #expect(other.history == [.answered, .error(.notFound, id: .int(3)), .finished, .authChangeEnded])
        #expect(sessions.loggedIn.count == 1)
    }
}
