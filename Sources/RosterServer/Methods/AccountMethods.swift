import RosterCore
import RosterRuntime
import RosterProtocol
import RosterStorage

/// `users.*`, `auth.login` and `session.resume`: the forms' rules without the forms, for scripts and backends.
extension Server {
    func accountMethods() -> [Method] {
        [
            Method(spec: MethodSpec(
                "users.check_username", summary: "Judge a username by the register rules, at once (no debounce).",
                params: [FieldSpec("username", .string)],
                result: .object([FieldSpec("state", .string), FieldSpec("code", .string), FieldSpec("message", .string)])),
                   handler: Server.checkUsername, dependence: .none),
            Method(spec: MethodSpec(
                "users.register", summary: "Create an account by the register form's rules; does not log in.",
                params: [FieldSpec("username", .string), FieldSpec("password", .string), .optional("email", .string)],
                result: .object([FieldSpec("username", .string)])), handler: Server.registerUser, dependence: .none),
            Method(spec: MethodSpec(
                "auth.login", summary: "Log this connection in by username or email; answers a token for session.resume.",
                params: [FieldSpec("username", .string), FieldSpec("password", .string)],
                result: .object([FieldSpec("username", .string), FieldSpec("token", .string)])), handler: Server.login),
            Method(spec: MethodSpec(
                "session.resume", summary: "Log this connection in with a token from a log-in.",
                params: [FieldSpec("token", .string)],
                result: .object([FieldSpec("username", .string)])), handler: Server.resume),
        ]
    }

    /// The register rules' verdict on a username, asking the storage only when the local rules pass. It comes
    /// before this returns when the storage answers from memory (the plain fast lane counts on that), else later.
    func usernameVerdict(_ username: String, charge: QueueCharge, completion: @escaping (FieldVerdict) -> Void) {
        switch RegisterRules.username(username, policy: config.policy) {
        case .settled(let verdict):
            completion(verdict)
        case .check(let check):
            accounts.check(check, charge: charge) { completion(check.verdict(for: $0)) }
        }
    }

    private func checkUsername(_ call: Call) {
        usernameVerdict(call.params.string("username") ?? "", charge: call.connection.queueCharge) { [self] verdict in
            call.succeed(checkUsernameResult(verdict, locale: call.session.locale))
        }
    }

    /// `users.check_username`'s result; the plain-request path sends the same one, pre-encoded.
    func checkUsernameResult(_ verdict: FieldVerdict, locale: RosterLocale) -> JSONValue {
        let key = "\(FieldName.username.rawValue).\(verdict.code.rawValue)"
        return [
            "state": .string(verdict.state.rawValue),
            "code": .string(verdict.code.rawValue),
            "message": .string(MessageCatalog.text(key, locale: locale,
                                                   arguments: FieldName.username.messageArguments(policy: config.policy))),
        ]
    }

    /// The register form's rules and its registration, without the form (see `Registration`).
    private func registerUser(_ call: Call) {
        let registration = Registration<Account>.judging(username: call.params.string("username") ?? "",
                                                         password: Secret(call.params.string("password") ?? ""),
                                                         email: call.params.string("email") ?? "", policy: config.policy)
        accounts.register(registration, charge: call.connection.queueCharge, announce: { [self] account in
            accountRegistered(account, by: call.peer, from: nil)
        }, completion: { result in
            call.finish(result.map { ["username": .string($0.account.username)] })
        })
    }

    /// The log-in form's submit without the form (see `LogIn`); a token that could not be stored fails it here,
    /// as a script has nothing to resume with.
    private func login(_ call: Call) {
        let request = LogInRequest(typedIdentifier: call.params.string("username") ?? "",
                                   password: Secret(call.params.string("password") ?? ""), policy: config.policy)
        call.asAuthChange { [self] answer in
            accounts.logIn(request, peerUID: call.peer.uid, charge: call.connection.queueCharge) { [self] result in
                switch result {
                case .failure(let error):
                    logger.notice("log-in refused: \(error.reason)", [("ROSTER_PEER_UID", String(call.peer.uid))])
                    answer(.failure(error))
                case .success(let signedIn):
                    answer(signedIn.token.map { token in
                        logIn(call.connection, as: signedIn.account, tokenHash: token.hash)
                        return ["username": .string(signedIn.account.username), "token": .string(token.bearer)]
                    })
                }
            }
        }
    }

    private func resume(_ call: Call) {
        let bearer = call.params.string("token") ?? ""
        call.asAuthChange { [self] answer in
            let started = revocations.resumeStarted()
            accounts.resume(bearer: bearer, charge: call.connection.queueCharge) { [self] result in
                let revokedMeanwhile = revocations.resumeEnded(startedAt: started, hash: try? result.get().1)
                answer(result.flatMap { user, hash in
                    guard !revokedMeanwhile else { return .failure(.notFound) }
                    logIn(call.connection, as: user, tokenHash: hash)
                    return .success(["username": .string(user.username)])
                })
            }
        }
    }
}
