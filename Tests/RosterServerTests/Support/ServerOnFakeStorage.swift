import Glibc
import RosterCore
import RosterCrypto
import RosterProtocol
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Testing
@testable import RosterServer

/// The whole server on an in-memory storage, its forms on a manual clock (the real 500 ms debounce, advanced by
/// hand), and clients over socketpairs: what another daemon's changes do to this one's sessions, seen as a client
/// sees it.
final class ServerOnFakeStorage {
    let loop: EventLoop
    let forms = ManualScheduler()
    /// Housekeeping's clock, apart from the forms' so that an hour of chores moves no form.
    let chores = ManualScheduler()
    let clock = ManualWallClock()
    let storage: InMemoryStorage
    let server: Server
    let log = KeptLog()

    init() throws {
        loop = try EventLoop(signals: [])
        var config = DaemonConfig()
        // The cheapest Argon2id libsodium allows: these tests are about what crosses daemons, not hashing.
        config.policy.hashMemoryKiB = 8
        config.policy.hashIterations = 1
        storage = InMemoryStorage(clock: clock)
        let logger = Logger(level: .debug, sink: log)
        let passwords = PasswordLanes(settings: config.server, cores: 1, policy: config.policy, loop: loop, logger: logger)
        server = Server(loop: loop, config: config, storage: storage, passwords: passwords,
                        contacts: ContactsService(storage: storage), logger: logger, secrets: testSecrets, clock: clock,
                        formScheduler: forms, choreScheduler: chores)
    }

    func connect() throws -> FakeStorageClient {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw SystemError(errno: errno, call: "socketpair")
        }
        _ = fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK)
        server.serve(connectedSocket: fds[0])
        return FakeStorageClient(fd: fds[1], host: self)
    }

    /// Moves the forms' clock, then lets the loop write what that produced.
    func advance(ms: Int64) throws {
        forms.advance(by: .milliseconds(ms))
        try settle()
    }

    /// Turns the loop until nothing is left to do for a few turns in a row.
    func settle() throws {
        for _ in 0..<5 { try loop.runOnce(timeoutMs: 1) }
    }

    /// An account made straight in the storage, as another daemon would.
    @discardableResult
    func accountMadeElsewhere(_ username: String, email: String? = nil, password: String = "secret1") throws -> Account {
        let hash = try PasswordHasher(memoryKiB: 8, iterations: 1).hash(password)
        var made: Account?
        storage.acting(for: .daemon).createAccount(NewAccount(username: username, display: username, email: email, passwordHash: hash)) { made = try? $0.get() }
        guard let made else { throw SystemError(errno: EEXIST, call: "createAccount") }
        return made
    }

    /// A new client logged in as `username` through `auth.login` (after a hello naming `client`, when given), with
    /// its `session` event taken, and the bearer token it was given.
    func loggedIn(as username: String, password: String = "secret1", client: String? = nil,
                  sourceLocation: SourceLocation = #_sourceLocation) throws -> (client: FakeStorageClient, token: String) {
        let connection = try connect()
        if let client { try connection.call("session.hello", ["client": .string(client)]) }
        let answer = try connection.call("auth.login", ["username": .string(username), "password": .string(password)])
        let token = try #require(answer["token"]?.stringValue, sourceLocation: sourceLocation)
        #expect(try connection.takeEvents() == ["session \(username)"], sourceLocation: sourceLocation)
        return (connection, token)
    }
}

/// One client of `ServerOnFakeStorage`: requests in, answers and events out, each event summed up in one line.
final class FakeStorageClient {
    /// -1 once `hangUp` closed it: a descriptor closed twice closes whatever another test opened under its number.
    private(set) var fd: Int32
    private unowned let host: ServerOnFakeStorage
    private var buffered: [UInt8] = []
    private var answers: [Int64: JSONValue] = [:]
    private var events: [String] = []
    private var nextID: Int64 = 1

    init(fd: Int32, host: ServerOnFakeStorage) {
        self.fd = fd
        self.host = host
    }

    deinit { hangUp() }

    /// Closes the client's end, as a peer that goes away does.
    func hangUp() {
        guard fd >= 0 else { return }
        close(fd)
        fd = -1
    }

    /// Sends a request and turns the loop until its answer came (or 10 s passed); the answer's `result` or `error`.
    @discardableResult
    func call(_ method: String, _ params: JSONValue = .object([])) throws -> JSONValue {
        try answer(to: send(method, params))
    }

    /// Sends a request without waiting for its answer; its id, for `answer(to:)`.
    func send(_ method: String, _ params: JSONValue = .object([])) -> Int64 {
        let id = nextID
        nextID += 1
        let line = JSONWriter.encode(.object([("id", .int(id)), ("method", .string(method)), ("params", params)])) + [10]
        _ = line.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        return id
    }

    /// Turns the loop until the answer to `id` came (or 10 s passed); its `result` or `error`.
    func answer(to id: Int64) throws -> JSONValue {
        let deadline = host.loop.now + .seconds(10)
        while answers[id] == nil && host.loop.now < deadline {
            try host.loop.runOnce(timeoutMs: 5)
            read()
        }
        let answer = answers.removeValue(forKey: id)
        return answer?["result"] ?? answer?["error"] ?? .null
    }

    /// The events that arrived since the last call, each as `summary` writes it.
    func takeEvents() throws -> [String] {
        try host.settle()
        read()
        defer { events = [] }
        return events
    }

    private func read() {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let got = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard got > 0 else { break }
            buffered += chunk[0..<got]
        }
        while let newline = buffered.firstIndex(of: 10) {
            let line = Array(buffered[..<newline])
            buffered.removeSubrange(...newline)
            guard let message = try? JSONParser.parse(line) else { continue }
            if let id = message["id"]?.int64Value {
                answers[id] = message
            } else if let params = message["params"] {
                events.append(Self.summary(params))
            }
        }
    }

    /// `field register.username invalid/taken r1`, `form register submittable`, `session alice1`,
    /// `results "" [Alice, Bea] of 2`, `audit 7 login alice1 succeeded`, …: enough to assert a whole history at a glance.
    static func summary(_ event: JSONValue) -> String {
        let type = event["type"]?.stringValue ?? "?"
        let form = event["form"]?.stringValue ?? ""
        switch type {
        case "field":
            let enabled = event["enabled"]?.boolValue == false ? " disabled" : ""
            return "field \(form).\(event["field"]?.stringValue ?? "") \(event["state"]?.stringValue ?? "")/"
                + "\(event["code"]?.stringValue ?? "") r\(event["rev"]?.int64Value ?? -1)\(enabled)"
        case "form" where event["closed"]?.boolValue == true:
            return "form \(form) closed"
        case "form":
            return "form \(form) \(event["submittable"]?.boolValue == true ? "submittable" : "not submittable")"
        case "submit":
            return "submit \(form) \(event["state"]?.stringValue ?? "")/\(event["code"]?.stringValue ?? "")"
        case "session":
            return "session \(event["user"]?.stringValue ?? "null")"
        case "results":
            let names = (event["items"]?.arrayValue ?? []).map { $0["name"]?.stringValue ?? "?" }
            return "results \"\(event["query"]?.stringValue ?? "")\" [\(names.joined(separator: ", "))] of "
                + "\(event["total"]?.int64Value ?? -1)"
        case "audit_missed":
            return "audit_missed \(event["count"]?.int64Value ?? -1) \(event["first_id"]?.int64Value ?? -1)-"
                + "\(event["last_id"]?.int64Value ?? -1)"
        case "audit":
            let entry = event["entry"]
            return "audit \(entry?["id"]?.int64Value ?? -1) \(entry?["event"]?.stringValue ?? "?") "
                + "\(entry?["username"]?.stringValue ?? "-") \(entry?["outcome"]?.stringValue ?? "?")"
        default:
            return type
        }
    }
}
