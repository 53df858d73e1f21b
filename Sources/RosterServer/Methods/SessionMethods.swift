import RosterCore
import RosterRuntime
import RosterProtocol
import RosterStorage

/// What `session.*` and `rpc.describe` need beyond the account procedures: the policy in force, what the server
/// offers, and the log-outs a `session.logout` makes. The session book, for the daemon's connections; a double in
/// a unit test.
protocol SessionChanges: AnyObject {
    associatedtype Host: CallHost
    var policy: Policy { get }
    /// Every method's spec, sorted by name.
    var methodSpecs: [MethodSpec] { get }
    /// `host`'s session is nobody's now; it hears so.
    func logOut(_ host: Host)
    /// Ends every session bound to the token `hash`, except `origin`'s (see `SessionBook.tokenRevoked`).
    func tokenRevoked(_ hash: [UInt8], except origin: Host?)
    /// Whether `peer` may say whom its connection speaks for (`session.hello` `remote`): root, the daemon's own
    /// user, and `[Server] GatewayUsers=`.
    func mayNameRemote(_ peer: PeerCredentials) -> Bool
}

/// `session.*` and `rpc.describe`: who the client is, which language it reads, and what the server offers.
final class SessionMethods<Sessions: SessionChanges> {
    typealias SessionCall = RequestCall<Sessions.Host>
    static var timingRange: ClosedRange<Int64> { 0...10_000 }

    private let accounts: AccountProcedures
    private unowned let sessions: Sessions

    init(accounts: AccountProcedures, sessions: Sessions) {
        self.accounts = accounts
        self.sessions = sessions
    }

    /// Every param is judged before any applies: a refused hello changes nothing.
    func hello(_ call: SessionCall) {
        let session = call.session
        var locale = session.locale
        if let tag = call.params.string("locale") {
            guard let chosen = RosterLocale(tag: tag) else {
                call.fail(.invalidParams(param: "locale", problem: .unsupportedLocale))
                return
            }
            locale = chosen
        }
        var remote = session.remote
        if let literal = call.params.string("remote") {
            switch judgeRemote(literal, call: call) {
            case .success(let address): remote = address
            case .failure(let error): return call.fail(error)
            }
        }
        let client = call.params.string("client")
        if let client, let refusal = RosterError.refusedFreeText(client, param: "client", maxLength: FreeText.clientMaxLength) {
            return call.fail(refusal)
        }
        session.locale = locale
        session.remote = remote
        if let timing = call.params["timing"] {
            if let debounce = timing["debounce_ms"]?.int64Value { session.debounceOverride = .milliseconds(debounce) }
            if let throttle = timing["throttle_ms"]?.int64Value { session.throttleOverride = .milliseconds(throttle) }
        }
        session.client = client
        session.greeted = true
        var result: [(String, JSONValue)] = [
            ("server", .string(RosterVersion.server)),
            ("version", .string(RosterVersion.version)),
            ("protocol", .int(RosterVersion.wireProtocol)),
            ("locale", .string(session.locale.rawValue)),
            ("timing", [
                "debounce_ms": .int(session.debounce(under: sessions.policy).nanoseconds / 1_000_000),
                "throttle_ms": .int(session.throttle(under: sessions.policy).nanoseconds / 1_000_000),
            ]),
        ]
        if let remote = session.remote { result.append(("remote", .string(remote.text))) }
        call.succeed(.object(result))
    }

    /// `remote` is taken only from a trusted peer, and only once: a connection that speaks for someone cannot
    /// start speaking for someone else (the same address again is no change). The peer is judged before the
    /// address, so an untrusted one learns nothing from how its text is read.
    private func judgeRemote(_ literal: String, call: SessionCall) -> Result<RemoteAddress, RosterError> {
        guard sessions.mayNameRemote(call.peer) else { return .failure(.forbidden) }
        guard let address = RemoteAddress(parsing: literal) else {
            return .failure(.invalidParams(param: "remote", problem: .notAnAddress))
        }
        if let held = call.session.remote, held != address { return .failure(.forbidden) }
        return .success(address)
    }

    func whoami(_ call: SessionCall) {
        guard let user = call.session.user else { return call.succeed(["user": .null]) }
        var described: [(String, JSONValue)] = [("username", .string(user.username))]
        if let email = user.email { described.append(("email", .string(email))) }
        call.succeed(["user": .object(described)])
    }

    /// Revokes the token first, so that once the answer arrives the token no longer resumes anything, and every
    /// other connection that resumed it is logged out too.
    func logout(_ call: SessionCall) {
        call.asAuthChange { [self] answer in
            guard let tokenHash = call.session.tokenHash else {
                sessions.logOut(call.connection)
                return answer(.success([:]))
            }
            let entry = AuditRecord(event: .logout, username: call.session.user?.username, peer: call.auditPeer)
            accounts.revoke(tokenHash: tokenHash, entry: entry, charge: call.connection.queueCharge) { [sessions] result in
                answer(result.map { _ in
                    sessions.tokenRevoked(tokenHash, except: call.connection)
                    sessions.logOut(call.connection)
                    return [:]
                })
            }
        }
    }

    func describe(_ call: SessionCall) {
        call.succeed([
            "protocol": .int(RosterVersion.wireProtocol),
            "methods": .array(sessions.methodSpecs.map(\.json)),
        ])
    }
}

extension SessionBook: SessionChanges {}

extension SessionMethods: MethodGroup {
    typealias Host = Sessions.Host

    /// The session methods' entries of the dispatcher's table; each handler is handed the group when called.
    static var table: [MethodEntry<SessionMethods>] {
        [
            MethodEntry(spec: MethodSpec(
                "session.hello",
                summary: "Introduce the client; set this connection's locale and timing overrides, and (a trusted "
                    + "gateway only) the address of the person it speaks for.",
                params: [
                    .optional("locale", .string),
                    .optional("client", .string),
                    .optional("remote", .string),
                    .optional("timing", .object([
                        .optional("debounce_ms", .integer(Self.timingRange)),
                        .optional("throttle_ms", .integer(Self.timingRange)),
                    ])),
                ],
                result: .object([
                    FieldSpec("server", .string), FieldSpec("version", .string),
                    FieldSpec("protocol", .integer(1...1)), FieldSpec("locale", .oneOf(RosterLocale.allCases.map(\.rawValue))),
                    FieldSpec("timing", .object([FieldSpec("debounce_ms", .integer(Self.timingRange)),
                                                 FieldSpec("throttle_ms", .integer(Self.timingRange))])),
                    .optional("remote", .string),
                ])), handler: { $0.hello($1) }, dependence: .none),
            MethodEntry(spec: MethodSpec(
                "session.whoami",
                summary: "Who this connection is logged in as.",
                result: .object([FieldSpec("user", .described("{username, email?} or null"))])), handler: { $0.whoami($1) }),
            MethodEntry(spec: MethodSpec(
                "session.logout",
                summary: "Log this connection out; a session event with user null follows.",
                result: .object([])), handler: { $0.logout($1) }),
            MethodEntry(spec: MethodSpec(
                "rpc.describe",
                summary: "Every method with its params and result shapes.",
                result: .object([FieldSpec("protocol", .integer(1...1)),
                                 FieldSpec("methods", .array(.described("{name, summary, params, result}")))])),
                   handler: { $0.describe($1) }, dependence: .none),
        ]
    }
}
