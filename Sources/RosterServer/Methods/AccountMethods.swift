import RosterCore
import RosterRuntime
import RosterProtocol
import RosterCrypto
import RosterStore

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

    /// The register rules' verdict on a username, asking the database only when the local rules pass.
    func usernameVerdict(_ username: String) -> FieldVerdict {
        if UsernameRules.isTooLongToNormalize(username, policy: config.policy) { return .invalid(.tooLong) }
        let canonical = Normalization.canonicalUsername(username)
        switch UsernameRules.validate(canonical: canonical, policy: config.policy) {
        case .settled(let verdict):
            return verdict
        case .needsCheck:
            return Check.usernameAvailable(canonical: canonical).verdict(for: accounts.usernameAvailability(canonical))
        }
    }

    private func checkUsername(_ call: Call) {
        call.succeed(checkUsernameResult(usernameVerdict(call.params.string("username") ?? ""),
                                         locale: call.session.locale))
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

    private func registerUser(_ call: Call) {
        let policy = config.policy
        let username = call.params.string("username") ?? ""
        let password = Secret(call.params.string("password") ?? "")
        let email = call.params.string("email") ?? ""
        let usernameVerdict = usernameVerdict(username)
        guard usernameVerdict.state == .valid else {
            return call.fail(usernameVerdict.code == .taken ? .taken(field: "username")
                             : .invalidField(field: "username", code: usernameVerdict.code.rawValue))
        }
        var needsQuality = false
        switch PasswordRules.validate(password, policy: policy) {
        case .settled(let verdict) where verdict.state != .valid:
            return call.fail(.invalidField(field: "password", code: verdict.code.rawValue))
        case .settled:
            break
        case .needsCheck:
            needsQuality = true
        }
        switch EmailRules.validate(email) {
        case .settled(let verdict) where verdict.state == .invalid:
            return call.fail(.invalidField(field: "email", code: verdict.code.rawValue))
        case .settled:
            break
        case .needsCheck:
            let verdict = Check.emailAvailable(canonical: Normalization.canonicalEmail(email))
                .verdict(for: accounts.emailAvailability(Normalization.canonicalEmail(email)))
            guard verdict.state == .valid else {
                return call.fail(verdict.code == .taken ? .taken(field: "email")
                                 : .invalidField(field: "email", code: verdict.code.rawValue))
            }
        }
        let canonical = Normalization.canonicalUsername(username)
        let normalized = Normalization.normalizedPassword(password, nfkc: policy.passwordNFKC)
        let storedEmail = email.isEmpty ? nil : Normalization.canonicalEmail(email)
        let store = { [self] in
            accounts.register(username: canonical, password: normalized, email: storedEmail,
                              charge: call.connection.queueCharge) { [self] result in
                switch result {
                case .success(let user):
                    accountRegistered(user, by: call.peer, from: nil)
                    call.succeed(["username": .string(user.canonical)])
                case .failure(let error):
                    call.fail(error)
                }
            }
        }
        guard needsQuality else { return store() }
        accounts.checkQuality(password: normalized, username: canonical, charge: call.connection.queueCharge) { result in
            let verdict = Check.passwordQuality(password: normalized, username: canonical).verdict(for: result)
            guard verdict.state == .valid else {
                return call.fail(.invalidField(field: "password", code: verdict.code.rawValue))
            }
            store()
        }
    }

    private func login(_ call: Call) {
        let identifier = Normalization.canonicalLoginIdentifier(call.params.string("username") ?? "")
        let password = Normalization.normalizedPassword(Secret(call.params.string("password") ?? ""),
                                                        nfkc: config.policy.passwordNFKC)
        call.asAuthChange { [self] answer in
            accounts.login(identifier: identifier, password: password, peerUID: call.peer.uid,
                           charge: call.connection.queueCharge) { [self] result in
                switch result {
                case .failure(let error):
                    logger.notice("log-in refused: \(error.reason)", [("ROSTER_PEER_UID", String(call.peer.uid))])
                    answer(.failure(error))
                case .success(let user):
                    accounts.issueToken(for: user, charge: call.connection.queueCharge) { [self] token in
                        answer(token.map { bearer in
                            logIn(call.connection, as: user, tokenHash: SessionToken.hash(bearer: bearer))
                            return ["username": .string(user.canonical), "token": .string(bearer)]
                        })
                    }
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
                    return .success(["username": .string(user.canonical)])
                })
            }
        }
    }
}
