import RosterCore
import RosterCrypto
import RosterProtocol
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Testing
@testable import RosterServer

/// Who may administer, the `[Audit]` settings and the following connections, set by hand.
final class FakeAuditDesk: AuditDesk {
    typealias Host = RecordingCallHost
    var admins: Set<UInt32> = [1000]
    var auditSettings = AuditSettings()
    var open: Set<UInt64> = [1, 2, 3, 4, 5]
    /// Every `audit` event sent, as `connection:id`.
    private(set) var sent: [String] = []

    func isAdmin(_ peer: PeerCredentials) -> Bool { admins.contains(peer.uid) }
    func isConnectionOpen(_ id: UInt64) -> Bool { open.contains(id) }
    func sendAuditEvent(_ entry: JSONValue, to id: UInt64) { sent.append("\(id):\(entry["id"]?.int64Value ?? -1)") }
    func sendAuditMissed(_ missed: MissedAuditEntries, to id: UInt64) {
        sent.append("\(id):missed \(missed.count) \(missed.firstID)-\(missed.lastID)")
    }
    /// Each connection's unread output, as the test sets it.
    var unsent: [UInt64: Int] = [:]
    func unsentOutputBytes(of id: UInt64) -> Int { unsent[id] ?? 0 }
    private(set) var drainWatched: Set<UInt64> = []
    func notifyWhenDrained(_ id: UInt64, backlogBytes: Int) { drainWatched.insert(id) }

    func takeSent() -> [String] {
        defer { sent = [] }
        return sent
    }
}

/// `admin.audit` on an in-memory log, with no server and no socket: who is served, the params, the page, and
/// following (its filter, its replacement, its end, its budget).
@Suite("admin.audit on an in-memory storage")
struct AdminAuditMethodsTests {
    let clock = ManualWallClock(nowMs: 1_796_148_000_000)
    let storage: InMemoryStorage
    let desk = FakeAuditDesk()
    let methods: AdminAuditMethods<FakeAuditDesk>
    let alice = AuditPeer(uid: 1000, pid: 4242, client: "rosterctl")

    init() throws {
        storage = InMemoryStorage(clock: clock)
        let accounts = AccountProcedures(storage: storage, passwords: FakePasswordWork(), policy: .seed,
                                         logger: Logger(level: .emerg), secrets: try AccountSecrets.ephemeral(), clock: clock)
        methods = AdminAuditMethods(storage: storage, accounts: accounts, desk: desk)
        storage.onAudit = { [methods] entry, _ in methods.entryCommitted(entry) }
    }

    private func call(_ params: [(String, JSONValue)] = [], on host: RecordingCallHost) throws -> RequestCall<RecordingCallHost> {
        let spec = try #require(AdminAuditMethods<FakeAuditDesk>.table.first { $0.spec.name == "admin.audit" }?.spec)
        return RequestCall(id: .int(1), params: try Params(validating: params, against: spec.params), connection: host)
    }

    /// The ids answered, newest first; or the error's reason.
    private func ask(_ params: [(String, JSONValue)] = [], on host: RecordingCallHost = RecordingCallHost(id: 1)) throws -> [Int64]? {
        methods.audit(try call(params, on: host))
        for event in host.history.reversed() {
            if case .answer(let line, _) = event {
                let items = try JSONParser.parse(Array(line.utf8))["result"]?["items"]?.arrayValue
                return items?.compactMap { $0["id"]?.int64Value }
            }
            if case .error = event { return nil }
        }
        return nil
    }

    private func refusal(_ params: [(String, JSONValue)], on host: RecordingCallHost = RecordingCallHost(id: 1)) throws -> RosterError? {
        methods.audit(try call(params, on: host))
        for case .error(let error, _) in host.history { return error }
        return nil
    }

    @discardableResult
    private func append(_ event: AuditEvent, _ username: String?, outcome: AuditOutcome = .succeeded) -> Int64 {
        var id: Int64 = -1
        storage.acting(for: .daemon).appendAudit(AuditRecord(event: event, username: username, peer: alice, outcome: outcome)) {
            id = (try? $0.get().id) ?? -1
        }
        clock.advance(byMs: 1_000)
        return id
    }

    @Test func onlyAnAdministratorIsServedAndNothingIsRead() throws {
        desk.admins = [0]
        #expect(try refusal([]) == .forbidden)
        #expect(try refusal([("follow", true)]) == .forbidden)
        #expect(storage.calls == [])
        append(.login, "alice1")
        #expect(desk.takeSent() == [])
    }

    @Test func theParamsAreCheckedAndEachMistakeNamesItsField() throws {
        let spec = try #require(AdminAuditMethods<FakeAuditDesk>.table.first?.spec)
        func invalid(_ params: [(String, JSONValue)]) -> RosterError? {
            do {
                _ = try Params(validating: params, against: spec.params)
                return nil
            } catch {
                return error
            }
        }
        #expect(invalid([("event", "logged_in")]) == .invalidParams(param: "event", problem: .outOfRange))
        #expect(invalid([("limit", 0)]) == .invalidParams(param: "limit", problem: .outOfRange))
        #expect(invalid([("limit", 1_001)]) == .invalidParams(param: "limit", problem: .outOfRange))
        #expect(invalid([("before", 0)]) == .invalidParams(param: "before", problem: .outOfRange))
        #expect(invalid([("follow", "yes")]) == .invalidParams(param: "follow", problem: .wrongType))
        #expect(invalid([("since", 1_796_148_000)]) == .invalidParams(param: "since", problem: .wrongType))
        #expect(invalid([("user", "alice1")]) == .invalidParams(param: "user", problem: .unknown))
        for event in AuditEvent.allCases { #expect(invalid([("event", .string(event.rawValue))]) == nil) }
        #expect(invalid([("limit", 1)]) == nil && invalid([("limit", 1_000)]) == nil)
        for since in ["yesterday", "2026-12-01", "2026-12-01T19:00:00", "2026-13-01T19:00:00Z", "1796148000"] {
            #expect(try refusal([("since", .string(since))]) == .invalidParams(param: "since", problem: .notATime), "\(since)")
        }
        #expect(storage.calls == [])
    }

    @Test func filtersHoldTogetherNewestFirst() throws {
        append(.register, "alice1")                       // 1
        append(.login, "alice1")                          // 2
        append(.login, nil, outcome: .failed)             // 3
        let since = clock.nowMs()
        append(.login, "bob123")                          // 4
        append(.logout, "alice1")                         // 5
        append(.login, "alice1", outcome: .failed)        // 6
        #expect(try ask() == [6, 5, 4, 3, 2, 1])
        #expect(try ask([("username", "alice1")]) == [6, 5, 2, 1])
        #expect(try ask([("username", "ALICE1")]) == [6, 5, 2, 1])
        #expect(try ask([("event", "login")]) == [6, 4, 3, 2])
        #expect(try ask([("username", "alice1"), ("event", "login")]) == [6, 2])
        #expect(try ask([("since", .string(UTCTime.rfc3339(unixMs: since)))]) == [6, 5, 4])
        // The same instant with an offset, and with fractions of a second.
        let offset = UTCTime.rfc3339(unixMs: since + 3_600_000).replacingOccurrences(of: "Z", with: "+01:00")
        #expect(try ask([("since", .string(offset)), ("event", "login")]) == [6, 4])
        #expect(try ask([("since", .string(UTCTime.rfc3339(unixMs: since).replacingOccurrences(of: "Z", with: ".000Z")))])
                == [6, 5, 4])
        #expect(try ask([("username", "nobody9")]) == [])
    }

    @Test func pagesGoBackByIdAndTheLimitHoldsWithADefaultOfAHundred() throws {
        for _ in 0..<150 { append(.login, "alice1") }
        let first = try #require(try ask([("limit", 40)]))
        #expect(first == Array((111...150).reversed()))
        let second = try ask([("limit", 40), ("before", .int(first.last ?? 0))])
        #expect(second == Array((71...110).reversed()))
        #expect(try ask([("before", 3)]) == [2, 1])
        #expect(try ask()?.count == 100)
        #expect(try ask([("limit", 1)]) == [150])
    }

    @Test func anEmailNamesTheAccountThatHoldsItNowAndAUsernameStaysFindable() throws {
        var made: Account?
        storage.acting(for: .daemon).createAccount(NewAccount(username: "alice1", display: "alice1", email: "alice@example.com",
                                                              passwordHash: FakePasswordWork.hash(of: "secret1"))) { made = try? $0.get() }
        #expect(made != nil)
        append(.login, "alice1")
        append(.login, "gone42")
        #expect(try ask([("username", "Alice@Example.com")]) == [1])
        #expect(try refusal([("username", "nobody@example.com")]) == .notFound)
        // No account is named gone42 any more; its entries are still its own.
        #expect(try ask([("username", "gone42")]) == [2])
    }

    @Test func aFollowerHearsWhatMatchesItsFilterUntilReplacedOrStopped() throws {
        append(.login, "alice1")                                              // 1
        #expect(try ask([("follow", true), ("username", "alice1")], on: RecordingCallHost(id: 1)) == [1])
        #expect(try ask([("follow", true)], on: RecordingCallHost(id: 2)) == [1])
        append(.login, "alice1")                                              // 2
        append(.login, "bob123")                                              // 3
        #expect(desk.takeSent() == ["1:2", "2:2", "2:3"])

        // A later call replaces the filter; one without `follow` pages back and leaves it be.
        #expect(try ask([("follow", true), ("event", "logout")], on: RecordingCallHost(id: 1)) == [])
        #expect(try ask([("before", 3)], on: RecordingCallHost(id: 1)) == [2, 1])
        append(.login, "alice1")                                              // 4
        append(.logout, "bob123")                                             // 5
        #expect(desk.takeSent() == ["2:4", "1:5", "2:5"])

        #expect(try ask([("follow", false), ("limit", 1)], on: RecordingCallHost(id: 1)) == [5])
        append(.logout, "alice1")                                             // 6
        #expect(desk.takeSent() == ["2:6"])
        methods.connectionClosed(2)
        append(.logout, "alice1")                                             // 7
        #expect(desk.takeSent() == [])
        #expect(methods.followers.count == 0)
    }

    /// A follower holding more unread output than its backlog misses entries instead of queueing them, and keeps
    /// missing every later one until its output is written out, however little is left unread meanwhile; then it
    /// hears one `audit_missed` with the count and the first and last id, and every newer entry again. Another
    /// follower hears everything all along; a follower that stops forgets what it missed.
    @Test func aFollowerBehindItsBacklogMissesEntriesUntilItDrainsThenHearsHowMany() throws {
        methods.followerBacklogBytes = 1_000
        #expect(try ask([("follow", true)], on: RecordingCallHost(id: 1)) == [])
        #expect(try ask([("follow", true)], on: RecordingCallHost(id: 2)) == [])
        append(.login, "alice1")                                              // 1
        desk.unsent[1] = 1_000
        append(.login, "alice1")                                              // 2: at the backlog, not past it
        #expect(desk.takeSent() == ["1:1", "2:1", "1:2", "2:2"])
        #expect(desk.drainWatched.isEmpty)

        desk.unsent[1] = 1_001
        append(.login, "alice1")                                              // 3
        #expect(desk.drainWatched == [1])
        desk.unsent[1] = 10
        append(.logout, "alice1")                                             // 4
        append(.login, "bob123")                                              // 5
        #expect(desk.takeSent() == ["2:3", "2:4", "2:5"])
        #expect(methods.followers.isMissing(1) && !methods.followers.isMissing(2))

        methods.outputDrained(2)
        #expect(desk.takeSent() == [])
        desk.unsent[1] = 0
        methods.outputDrained(1)
        #expect(desk.takeSent() == ["1:missed 3 3-5"])
        methods.outputDrained(1)
        append(.logout, "bob123")                                             // 6
        #expect(desk.takeSent() == ["1:6", "2:6"])

        // What a follower missed goes with it when it stops following.
        desk.unsent[1] = 5_000
        append(.login, "alice1")                                              // 7
        #expect(try ask([("follow", false), ("limit", 1)], on: RecordingCallHost(id: 1)) == [7])
        methods.outputDrained(1)
        #expect(desk.takeSent() == ["2:7"])
    }

    @Test func anEntryWrittenWhileThePageIsReadReachesTheFollowerAnyway() throws {
        append(.login, "alice1")                                              // 1
        storage.answering = .onRelease
        let host = RecordingCallHost(id: 1)
        methods.audit(try call([("follow", true)], on: host))
        // The page is still being read when another entry commits: the follower hears it.
        storage.answering = .immediately
        append(.logout, "alice1")                                             // 2
        #expect(desk.takeSent() == ["1:2"])
        _ = storage.releaseAll()
        #expect(host.history.contains { if case .answer = $0 { true } else { false } })
    }

    @Test func followersHaveABudgetAndAFailedCallChangesNothing() throws {
        desk.auditSettings.maxFollowers = 2
        #expect(try ask([("follow", true)], on: RecordingCallHost(id: 1)) == [])
        #expect(try ask([("follow", true)], on: RecordingCallHost(id: 2)) == [])
        #expect(try refusal([("follow", true)], on: RecordingCallHost(id: 3)) == .busy(retryAfterMs: 5_000))
        // Within the budget a follower may change its filter as often as it likes.
        #expect(try ask([("follow", true), ("event", "login")], on: RecordingCallHost(id: 2)) == [])
        #expect(methods.followers.count == 2)
        // A reload's new budget applies to the next follower; one that stops makes room.
        desk.auditSettings.maxFollowers = 3
        #expect(try ask([("follow", true)], on: RecordingCallHost(id: 3)) == [])
        desk.auditSettings.maxFollowers = 1
        #expect(try ask([("follow", false)], on: RecordingCallHost(id: 1)) == [])
        #expect(try refusal([("follow", true)], on: RecordingCallHost(id: 4)) == .busy(retryAfterMs: 5_000))
        #expect(methods.followers.count == 2)

        // The storage refusing the page leaves the follower as it was.
        storage.failures[.auditEntries] = .unavailable(retryAfterMs: 250)
        #expect(try refusal([("follow", true), ("event", "logout")], on: RecordingCallHost(id: 2))
                == .storageUnavailable(retryAfterMs: 250))
        #expect(methods.followers.filter(of: 2) == AuditFilter(username: nil, event: .login))
        #expect(try refusal([("follow", false)], on: RecordingCallHost(id: 3)) == .storageUnavailable(retryAfterMs: 250))
        #expect(methods.followers.filter(of: 3) == AuditFilter())
        // Nor does it forget what a follower missed.
        methods.followerBacklogBytes = 0
        desk.unsent[3] = 1
        append(.login, "alice1")
        #expect(try refusal([("follow", false)], on: RecordingCallHost(id: 3)) == .storageUnavailable(retryAfterMs: 250))
        methods.outputDrained(3)
        #expect(desk.takeSent().contains("3:missed 1 1-1"))
        // A connection that closed while its call waited does not become a follower.
        storage.failures = [:]
        desk.open.remove(5)
        desk.auditSettings.maxFollowers = 16
        #expect(try refusal([("follow", true)], on: RecordingCallHost(id: 5)) != nil)
        #expect(methods.followers.filter(of: 5) == nil)
    }

    @Test func anEntryOnTheWireHasEveryField() {
        let passkey = AuditEntry(id: 3, timeMs: 0, record: AuditRecord(
            event: .login, username: "bobby1", peer: AuditPeer(uid: 0, pid: 1, client: nil), method: .passkey))
        #expect(String(decoding: JSONWriter.encode(AdminAuditMethods<FakeAuditDesk>.described(passkey)), as: UTF8.self)
            .hasSuffix(#""reason":null,"suppressed":0,"method":"passkey"}"#))
        let entry = AuditEntry(id: 17, timeMs: 1_796_151_845_250, record: AuditRecord(
            event: .login, username: "bobby1", peer: AuditPeer(uid: 1000, pid: 4242, client: "rosterctl"),
            outcome: .failed, reason: "wrong_password", suppressed: 3))
        #expect(JSONWriter.encode(AdminAuditMethods<FakeAuditDesk>.described(entry)) == Array((
            #"{"id":17,"time":"2026-12-01T19:04:05Z","event":"login","username":"bobby1","peer_uid":1000,"peer_pid":4242,"#
            + #""client":"rosterctl","remote":null,"outcome":"failed","reason":"wrong_password","suppressed":3,"method":null}"#).utf8))
        let bare = AuditEntry(id: 1, timeMs: 0, record: AuditRecord(event: .backup, username: nil,
                                                                    peer: AuditPeer(uid: 0, pid: 1, client: nil)))
        #expect(JSONWriter.encode(AdminAuditMethods<FakeAuditDesk>.described(bare)) == Array((
            #"{"id":1,"time":"1970-01-01T00:00:00Z","event":"backup","username":null,"peer_uid":0,"peer_pid":1,"#
            + #""client":null,"remote":null,"outcome":"succeeded","reason":null,"suppressed":0,"method":null}"#).utf8))
        let web = AuditEntry(id: 2, timeMs: 0, record: AuditRecord(
            event: .login, username: nil, peer: AuditPeer(uid: 33, pid: 812, client: "roster-web", remote: "203.0.113.5"),
            outcome: .failed, reason: "unknown_user"))
        #expect(JSONWriter.encode(AdminAuditMethods<FakeAuditDesk>.described(web)) == Array((
            #"{"id":2,"time":"1970-01-01T00:00:00Z","event":"login","username":null,"peer_uid":33,"peer_pid":812,"#
            + #""client":"roster-web","remote":"203.0.113.5","outcome":"failed","reason":"unknown_user","suppressed":0,"method":null}"#).utf8))
    }
}
