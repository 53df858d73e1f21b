import RosterCore
import RosterCrypto
import RosterProtocol
import RosterRuntime
import RosterStorage
import RosterWebAuthn

/// A passkey as its owner sees it (`passkey.list`, `account.export`): no key, no counter.
enum PasskeyListing {
    static func described(_ passkey: StoredPasskey) -> JSONValue {
        [
            "id": .string(Base64URL.encode(passkey.credentialID)),
            "name": .string(passkey.name),
            "created_at": .string(UTCTime.rfc3339(unixMs: passkey.createdMs)),
            "last_used_at": passkey.lastUsedMs.map { .string(UTCTime.rfc3339(unixMs: $0)) } ?? .null,
        ]
    }

    static let shape = Shape.object([
        FieldSpec("id", .string), FieldSpec("name", .string), FieldSpec("created_at", .string),
        FieldSpec("last_used_at", .described("string or null")),
    ])
}

/// What the passkey methods need beyond the account procedures: the `[WebAuthn]` settings in force. The session
/// book; a double in a unit test.
protocol PasskeySessions: AccountSessions {
    var webAuthn: WebAuthnSettings { get }
}

/// `passkey.*`, `auth.passkey_begin` and `auth.passkey_finish` (protocol.md "Passkeys"): rosterd is the relying
/// party, every client relays the WebAuthn JSON. Each connection holds its own ceremonies (`PasskeyCeremonies`),
/// so a challenge answers only on the connection that asked for it, once.
final class PasskeyMethods<Sessions: PasskeySessions> {
    typealias PasskeyCall = RequestCall<Sessions.Host>

    private let accounts: AccountProcedures
    private unowned let sessions: Sessions

    init(accounts: AccountProcedures, sessions: Sessions) {
        self.accounts = accounts
        self.sessions = sessions
    }

    private var nowMs: Int64 { accounts.clock.nowMs() }

    private static func challenge() throws(RosterError) -> [UInt8] {
        do { return try RandomBytes.make(count: PasskeyCeremonies.challengeBytes) } catch { throw .internal }
    }

    private static func descriptor(_ passkey: AllowedPasskey) -> JSONValue {
        [
            "type": "public-key",
            "id": .string(Base64URL.encode(passkey.credentialID)),
            "transports": .array(passkey.transports.map(JSONValue.string)),
        ]
    }

    // MARK: Registration

    func registerBegin(_ call: PasskeyCall) {
        guard let user = call.loggedInUser() else { return }
        let settings = sessions.webAuthn
        let password = Secret(call.params.string("password") ?? "")
        accounts.beginPasskeyRegistration(of: user, password: password, peer: call.auditPeer,
                                          charge: call.connection.queueCharge) { [self] result in
            call.finish(result.flatMap { start -> Result<JSONValue, RosterError> in
                let challenge: [UInt8]
                do throws(RosterError) { challenge = try Self.challenge() } catch { return .failure(error) }
                call.session.passkeys.begin(PasskeyCeremonies.Registration(
                    challenge: challenge, account: user.id, startedMs: nowMs, relyingParty: settings))
                let options: JSONValue = [
                    "challenge": .string(Base64URL.encode(challenge)),
                    "rp": ["id": .string(settings.rpID), "name": .string(settings.rpName)],
                    "user": ["id": .string(Base64URL.encode(start.userHandle)), "name": .string(user.username),
                             "displayName": .string(user.username)],
                    "pubKeyCredParams": .array(PasskeyPublicKey.Algorithm.allCases.map {
                        ["type": "public-key", "alg": .int($0.rawValue)]
                    }),
                    "timeout": .int(PasskeyCeremonies.lifetimeMs),
                    "excludeCredentials": .array(start.existing.map { Self.descriptor(AllowedPasskey($0)) }),
                    "authenticatorSelection": ["residentKey": "preferred", "userVerification": "preferred"],
                    "attestation": "none",
                ]
                return .success(["options": options])
            })
        }
    }

    /// The credential param read as `shape`; `invalid_params` naming the member that is wrong.
    private static func credential<Response>(_ call: PasskeyCall,
                                             _ read: (JSONValue) throws(CredentialShapeError) -> Response) -> Response? {
        guard let json = call.params["credential"] else {
            call.fail(.invalidParams(param: "credential", problem: .missing))
            return nil
        }
        do throws(CredentialShapeError) {
            return try read(json)
        } catch {
            let param = error.member == "credential" ? "credential" : "credential." + error.member
            call.fail(.invalidParams(param: param, problem: .wrongType))
            return nil
        }
    }

    func registerFinish(_ call: PasskeyCall) {
        guard let user = call.loggedInUser() else { return }
        let name = call.params.string("name")
        if let name, let refusal = RosterError.refusedFreeText(name, param: "name", maxLength: Self.nameMaxLength) {
            return call.fail(refusal)
        }
        if let name, name.allSatisfy(\.isWhitespace) {
            return call.fail(.invalidParams(param: "name", problem: .outOfRange))
        }
        guard let response = Self.credential(call, { (json) throws(CredentialShapeError) in
            try RegistrationResponse(json: json)
        }) else { return }
        // Taken whatever comes next: a response is judged once against its challenge.
        let ceremony = call.session.passkeys.takeRegistration(at: nowMs).flatMap { $0.account == user.id ? $0 : nil }
        accounts.finishPasskeyRegistration(
            of: user, response: response, challenge: ceremony?.challenge ?? [],
            relyingParty: RelyingParty(ceremony?.relyingParty ?? sessions.webAuthn), name: name,
            peer: call.auditPeer, charge: call.connection.queueCharge) { result in
            call.finish(result.map { ["id": .string(Base64URL.encode($0.credentialID)), "name": .string($0.name)] })
        }
    }

    /// A passkey's name, in Unicode scalars (as every free-text param is counted).
    static var nameMaxLength: Int { 64 }

    // MARK: The owner's list

    func list(_ call: PasskeyCall) {
        guard let user = call.loggedInUser() else { return }
        accounts.passkeys(of: user, charge: call.connection.queueCharge) { result in
            call.finish(result.map { ["items": .array($0.map(PasskeyListing.described))] })
        }
    }

    func remove(_ call: PasskeyCall) {
        guard let user = call.loggedInUser() else { return }
        guard let id = call.params.string("id").flatMap({ Base64URL.decode($0, limit: 1023) }), !id.isEmpty else {
            return call.fail(.invalidParams(param: "id", problem: .wrongType))
        }
        accounts.removePasskey(of: user, credentialID: id, password: Secret(call.params.string("password") ?? ""),
                               peer: call.auditPeer, charge: call.connection.queueCharge) { result in
            call.finish(result.map { [:] })
        }
    }

    // MARK: Log-in

    func logInBegin(_ call: PasskeyCall) {
        let settings = sessions.webAuthn
        let begin = { [self] (allowed: [AllowedPasskey]?) -> Void in
            let challenge: [UInt8]
            do throws(RosterError) { challenge = try Self.challenge() } catch { return call.fail(error) }
            call.session.passkeys.begin(PasskeyCeremonies.LogIn(
                challenge: challenge, allowed: allowed.map { $0.map(\.credentialID) }, startedMs: nowMs,
                relyingParty: settings))
            call.succeed(["options": [
                "challenge": .string(Base64URL.encode(challenge)),
                "rpId": .string(settings.rpID),
                "timeout": .int(PasskeyCeremonies.lifetimeMs),
                "allowCredentials": .array((allowed ?? []).map(Self.descriptor)),
                "userVerification": "preferred",
            ]])
        }
        guard let username = call.params.string("username") else { return begin(nil) }
        accounts.passkeysAllowed(for: username, charge: call.connection.queueCharge) { result in
            switch result {
            case .success(let allowed): begin(allowed)
            case .failure(let error): call.fail(error)
            }
        }
    }

    func logInFinish(_ call: PasskeyCall) {
        let code = call.params.string("code").map(LoginRules.typedCode)
        let request: PasskeyLogInRequest
        let input: PasskeyAssertionInput
        var startedMs: Int64 = 0
        if call.params["credential"] != nil {
            guard let response = Self.credential(call, { (json) throws(CredentialShapeError) in
                try AssertionResponse(json: json)
            }) else { return }
            let ceremony = call.session.passkeys.takeLogIn(at: nowMs)
            startedMs = ceremony?.startedMs ?? 0
            request = PasskeyLogInRequest(credentialID: response.rawID, proof: .assertion(userHandle: response.userHandle),
                                          allowed: ceremony?.allowed, code: code)
            input = PasskeyAssertionInput(response: response, challenge: ceremony?.challenge ?? [],
                                          relyingParty: RelyingParty(ceremony?.relyingParty ?? sessions.webAuthn))
        } else {
            guard let code, !code.isEmpty else { return call.fail(.invalidParams(param: "credential", problem: .missing)) }
            guard let awaiting = call.session.passkeys.takeAwaitingCode(at: nowMs) else {
                return call.fail(.invalidParams(param: "code", problem: .noPendingPasskey))
            }
            startedMs = awaiting.startedMs
            request = PasskeyLogInRequest(credentialID: awaiting.credentialID, proof: .verifiedEarlier,
                                          allowed: awaiting.allowed, code: code)
            input = PasskeyAssertionInput(response: nil, challenge: [], relyingParty: RelyingParty(sessions.webAuthn))
        }
        call.asAuthChange { [self] answer in
            accounts.logIn(passkey: request, input: input, peer: call.auditPeer,
                           charge: call.connection.queueCharge) { [self] result in
                switch result {
                case .failure(.codeRequired):
                    call.session.passkeys.awaitCode(PasskeyCeremonies.AwaitingCode(
                        credentialID: request.credentialID, allowed: request.allowed, startedMs: startedMs))
                    answer(.failure(.passkeyNeedsCode))
                case .failure(let error):
                    sessions.logger.notice("passkey log-in refused: \(error.reason)",
                                           [("ROSTER_PEER_UID", String(call.peer.uid))])
                    answer(.failure(error == .invalidCredentials ? .unknownPasskey : error))
                case .success(let signedIn):
                    answer(signedIn.token.map { token in
                        sessions.logIn(call.connection, as: signedIn.account, tokenHash: token.hash)
                        return ["username": .string(signedIn.account.username), "token": .string(token.bearer)]
                    })
                }
            }
        }
    }
}

extension SessionBook: PasskeySessions {
    var webAuthn: WebAuthnSettings { config.webAuthn }
}

extension PasskeyMethods: MethodGroup {
    typealias Host = Sessions.Host

    static var table: [MethodEntry<PasskeyMethods>] {
        let options = FieldSpec("options", .described("the WebAuthn options JSON, binary fields base64url"))
        let credential = FieldSpec("credential", .described("the WebAuthn response JSON (credential.toJSON())"))
        return [
            MethodEntry(spec: MethodSpec(
                "passkey.register_begin",
                summary: "Begin adding a passkey to this session's account (the password again): "
                    + "PublicKeyCredentialCreationOptionsJSON for navigator.credentials.create, valid 5 minutes.",
                params: [FieldSpec("password", .string)], result: .object([options])),
                        handler: { $0.registerBegin($1) }),
            MethodEntry(spec: MethodSpec(
                "passkey.register_finish",
                summary: "Verify and store the new passkey; passkey_rejected with data.why when it does not verify.",
                params: [credential, .optional("name", .string)],
                result: .object([FieldSpec("id", .string), FieldSpec("name", .string)])),
                        handler: { $0.registerFinish($1) }),
            MethodEntry(spec: MethodSpec(
                "passkey.list", summary: "This session's account's passkeys, oldest first (no keys).",
                result: .object([FieldSpec("items", .array(PasskeyListing.shape))])), handler: { $0.list($1) }),
            MethodEntry(spec: MethodSpec(
                "passkey.remove", summary: "Remove one of this session's account's passkeys (the password again).",
                params: [FieldSpec("id", .string), FieldSpec("password", .string)], result: .object([])),
                        handler: { $0.remove($1) }),
            MethodEntry(spec: MethodSpec(
                "auth.passkey_begin",
                summary: "Begin a passkey log-in: PublicKeyCredentialRequestOptionsJSON for navigator.credentials.get "
                    + "(allowCredentials empty without a username: a discoverable passkey finds its user).",
                params: [.optional("username", .string)], result: .object([options])),
                        handler: { $0.logInBegin($1) }),
            MethodEntry(spec: MethodSpec(
                "auth.passkey_finish",
                summary: "Log this connection in with a passkey; a user-verified one needs no TOTP code, else "
                    + "code_required and the next call takes code (credential may then be left out).",
                params: [.optional("credential", .described("the WebAuthn response JSON")),
                         .optional("code", .string)],
                result: .object([FieldSpec("username", .string), FieldSpec("token", .string)])),
                        handler: { $0.logInFinish($1) }),
        ]
    }
}
