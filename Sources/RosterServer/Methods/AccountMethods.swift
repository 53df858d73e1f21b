import RosterCore
import RosterCrypto
import RosterRuntime
import RosterProtocol
import RosterStorage

/// What the account methods need beyond the account procedures: the policy in force, and the sessions that a
/// registration or a log-in concerns. The session book, for the daemon's connections; a double in a unit test.
protocol AccountSessions: AnyObject {
    associatedtype Host: CallHost
    var policy: Policy { get }
    /// Read at each use: a reload's log level reaches the methods' lines at once.
    var logger: Logger { get }
    /// Every registration ends here, whoever made it (see `SessionBook.accountRegistered`).
    func accountRegistered(_ account: Account, by peer: PeerCredentials)
    /// `host`'s session is now `account`'s, bound to the token `tokenHash` when there is one.
    func logIn(_ host: Host, as account: Account, tokenHash: [UInt8]?)
    /// As `logIn`, with what the session may call (a DAV log-in's token: the contacts only).
    func logIn(_ host: Host, as account: Account, tokenHash: [UInt8]?, scope: SessionScope)
    /// A resume reads its token later; a revocation of that token in between must still win (see
    /// `RevocationsDuringResumes`). `resumeEnded` says whether it did.
    func resumeStarted() -> UInt64
    func resumeEnded(startedAt start: UInt64, hash: [UInt8]?, account: AccountID?) -> Bool
}

/// `users.check_username`'s result, written once for both paths: the general one and the plain lane
/// (`PlainRequests`), which sends it pre-encoded.
enum UsernameCheckAnswer {
    static func result(_ verdict: FieldVerdict, locale: RosterLocale, policy: Policy) -> JSONValue {
        let key = "\(FieldName.username.rawValue).\(verdict.code.rawValue)"
        return [
            "state": .string(verdict.state.rawValue),
            "code": .string(verdict.code.rawValue),
            "message": .string(MessageCatalog.text(key, locale: locale,
                                                   arguments: FieldName.username.messageArguments(policy: policy))),
        ]
    }
}

/// `users.*`, `auth.login` and `session.resume`: the forms' rules without the forms, for scripts and backends.
final class AccountMethods<Sessions: AccountSessions> {
    typealias AccountCall = RequestCall<Sessions.Host>

    private let accounts: AccountProcedures
    private unowned let sessions: Sessions
    private var logger: Logger { sessions.logger }

    init(accounts: AccountProcedures, sessions: Sessions) {
        self.accounts = accounts
        self.sessions = sessions
    }

    /// The register rules' verdict on a username, asking the storage only when the local rules pass. It comes
    /// before this returns when the storage answers from memory, else later.
    func usernameVerdict(_ username: String, charge: QueueCharge, completion: @escaping (FieldVerdict) -> Void) {
        switch RegisterRules.username(username, policy: sessions.policy) {
        case .settled(let verdict):
            completion(verdict)
        case .check(let check):
            accounts.check(check, charge: charge) { completion(check.verdict(for: $0)) }
        }
    }

    func checkUsername(_ call: AccountCall) {
        usernameVerdict(call.params.string("username") ?? "", charge: call.connection.queueCharge) { [self] verdict in
            call.succeed(checkUsernameResult(verdict, locale: call.session.locale))
        }
    }

    /// `users.check_username`'s result under the policy in force.
    func checkUsernameResult(_ verdict: FieldVerdict, locale: RosterLocale) -> JSONValue {
        UsernameCheckAnswer.result(verdict, locale: locale, policy: sessions.policy)
    }

    /// The register form's rules and its registration, without the form (see `Registration`).
    func register(_ call: AccountCall) {
        let registration = Registration<Account>.judging(username: call.params.string("username") ?? "",
                                                         password: Secret(call.params.string("password") ?? ""),
                                                         email: call.params.string("email") ?? "",
                                                         policy: sessions.policy)
        accounts.register(registration, peer: call.auditPeer, charge: call.connection.queueCharge,
                          locale: call.session.locale, announce: { [sessions] account in
            sessions.accountRegistered(account, by: call.peer)
        }, completion: { result in
            call.finish(result.map { ["username": .string($0.account.username)] })
        })
    }

    /// The log-in form's submit without the form (see `LogIn`); a token that could not be stored fails it here,
    /// as a script has nothing to resume with.
    func logIn(_ call: AccountCall) {
        let request = LogInRequest(typedIdentifier: call.params.string("username") ?? "",
                                   password: Secret(call.params.string("password") ?? ""), policy: sessions.policy,
                                   code: call.params.string("code").map(LoginRules.typedCode))
        call.asAuthChange { [self] answer in
            accounts.logIn(request, peer: call.auditPeer, charge: call.connection.queueCharge) { [self] result in
                switch result {
                case .failure(let error):
                    logger.notice("log-in refused: \(error.reason)", [("ROSTER_PEER_UID", String(call.peer.uid))])
                    answer(.failure(error))
                case .success(let signedIn):
                    answer(signedIn.token.map { token in
                        sessions.logIn(call.connection, as: signedIn.account, tokenHash: token.hash)
                        return ["username": .string(signedIn.account.username), "token": .string(token.bearer)]
                    })
                }
            }
        }
    }

    func resume(_ call: AccountCall) {
        let bearer = call.params.string("token") ?? ""
        call.asAuthChange { [self] answer in
            let started = sessions.resumeStarted()
            accounts.resume(bearer: bearer, peer: call.auditPeer, charge: call.connection.queueCharge) { [self] result in
                // A resume that failed binds nothing, so no revocation can have raced it.
                let revokedMeanwhile: Bool
                switch result {
                case .success(let (user, hash)):
                    revokedMeanwhile = sessions.resumeEnded(startedAt: started, hash: hash, account: user.id)
                case .failure:
                    revokedMeanwhile = sessions.resumeEnded(startedAt: started, hash: nil, account: nil)
                }
                answer(result.flatMap { user, hash -> Result<JSONValue, RosterError> in
                    guard !revokedMeanwhile else { return .failure(.notFound) }
                    // A DAV log-in's token keeps its scope: the bearer says which it is, and its hash covers that.
                    sessions.logIn(call.connection, as: user, tokenHash: hash,
                                   scope: SessionToken.isContactsOnly(bearer: bearer) ? .contacts : .full)
                    return .success(["username": .string(user.username)])
                })
            }
        }
    }
}

extension AccountSessions {
    /// A double that keeps no scope: the session is `account`'s, whatever it may call.
    func logIn(_ host: Host, as account: Account, tokenHash: [UInt8]?, scope: SessionScope) {
        logIn(host, as: account, tokenHash: tokenHash)
    }
}

/// The daemon's account methods: its connections' sessions, under the configuration in force.
extension SessionBook: AccountSessions {}

extension AccountMethods: MethodGroup {
    typealias Host = Sessions.Host

    /// The account methods' entries of the dispatcher's table; each handler is handed the group when called.
    static var table: [MethodEntry<AccountMethods>] {
        [
            MethodEntry(spec: MethodSpec(
                "users.check_username", summary: "Judge a username by the register rules, at once (no debounce).",
                params: [FieldSpec("username", .string)],
                result: .object([FieldSpec("state", .string), FieldSpec("code", .string), FieldSpec("message", .string)])),
                   handler: { $0.checkUsername($1) }, dependence: .none),
            MethodEntry(spec: MethodSpec(
                "users.register", summary: "Create an account by the register form's rules; does not log in.",
                params: [FieldSpec("username", .string), FieldSpec("password", .string), .optional("email", .string)],
                result: .object([FieldSpec("username", .string)])), handler: { $0.register($1) },
                   dependence: .none),
            MethodEntry(spec: MethodSpec(
                "auth.login", summary: "Log this connection in by username or email; answers a token for session.resume.",
                params: [FieldSpec("username", .string), FieldSpec("password", .string), .optional("code", .string)],
                result: .object([FieldSpec("username", .string), FieldSpec("token", .string)])),
                   handler: { $0.logIn($1) }),
            MethodEntry(spec: MethodSpec(
                "session.resume", summary: "Log this connection in with a token from a log-in.",
                params: [FieldSpec("token", .string)],
                result: .object([FieldSpec("username", .string)])), handler: { $0.resume($1) }),
        ]
    }
}
