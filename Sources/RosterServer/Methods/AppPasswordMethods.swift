import RosterCore
import RosterCrypto
import RosterProtocol
import RosterRuntime
import RosterStorage

/// An app password as its owner sees it (`account.app_password_list`, `account.export`): no secret, no hash.
enum AppPasswordListing {
    static func described(_ appPassword: StoredAppPassword) -> JSONValue {
        [
            "id": .string(appPassword.id),
            "name": .string(appPassword.name),
            "created_at": .string(UTCTime.rfc3339(unixMs: appPassword.createdMs)),
            "last_used_at": appPassword.lastUsedMs.map { .string(UTCTime.rfc3339(unixMs: $0)) } ?? .null,
        ]
    }

    static let shape = Shape.object([
        FieldSpec("id", .string), FieldSpec("name", .string), FieldSpec("created_at", .string),
        FieldSpec("last_used_at", .described("string or null")),
    ])
}

/// `account.app_password_*` and `auth.dav_login` (protocol.md "App passwords"): the secrets a CardDAV client logs in
/// with, and the log-in that gives it a contacts-only session.
final class AppPasswordMethods<Sessions: AccountSessions> {
    typealias AppPasswordCall = RequestCall<Sessions.Host>

    private let accounts: AccountProcedures
    private unowned let sessions: Sessions

    init(accounts: AccountProcedures, sessions: Sessions) {
        self.accounts = accounts
        self.sessions = sessions
    }

    /// An app password's name, in Unicode scalars (as every free-text param is counted).
    static var nameMaxLength: Int { 64 }

    func create(_ call: AppPasswordCall) {
        guard let user = call.loggedInUser() else { return }
        let name = call.params.string("name") ?? ""
        if let refusal = RosterError.refusedFreeText(name, param: "name", maxLength: Self.nameMaxLength) {
            return call.fail(refusal)
        }
        if name.allSatisfy(\.isWhitespace) { return call.fail(.invalidParams(param: "name", problem: .outOfRange)) }
        accounts.createAppPassword(of: user, name: name, peer: call.auditPeer, charge: call.connection.queueCharge) {
            result in
            call.finish(result.map { stored, secret in
                ["id": .string(stored.id), "name": .string(stored.name), "password": .string(secret.exposed)]
            })
        }
    }

    func list(_ call: AppPasswordCall) {
        guard let user = call.loggedInUser() else { return }
        accounts.appPasswords(of: user, charge: call.connection.queueCharge) { result in
            call.finish(result.map { ["items": .array($0.map(AppPasswordListing.described))] })
        }
    }

    func remove(_ call: AppPasswordCall) {
        guard let user = call.loggedInUser() else { return }
        guard let id = call.params.string("id"), AppPasswordLimits.storedIDCharacters.contains(id.unicodeScalars.count)
        else { return call.fail(.invalidParams(param: "id", problem: .outOfRange)) }
        accounts.removeAppPassword(of: user, id: id, peer: call.auditPeer, charge: call.connection.queueCharge) {
            result in
            call.finish(result.map { [:] })
        }
    }

    /// A DAV client's credentials, relayed by the gateway: a contacts-only session and its token.
    func davLogIn(_ call: AppPasswordCall) {
        let request = DavLogInRequest(typedIdentifier: call.params.string("username") ?? "",
                                      password: Secret(call.params.string("password") ?? ""), policy: sessions.policy)
        call.asAuthChange { [self] answer in
            accounts.davLogIn(request, peer: call.auditPeer, charge: call.connection.queueCharge) { [self] result in
                switch result {
                case .failure(let error):
                    sessions.logger.notice("DAV log-in refused: \(error.reason)",
                                           [("ROSTER_PEER_UID", String(call.peer.uid))])
                    answer(.failure(error))
                case .success(let signedIn):
                    answer(signedIn.token.map { token in
                        sessions.logIn(call.connection, as: signedIn.account, tokenHash: token.hash, scope: .contacts)
                        return ["username": .string(signedIn.account.username), "token": .string(token.bearer)]
                    })
                }
            }
        }
    }
}

extension AppPasswordMethods: MethodGroup {
    typealias Host = Sessions.Host

    static var table: [MethodEntry<AppPasswordMethods>] {
        [
            MethodEntry(spec: MethodSpec(
                "account.app_password_create",
                summary: "Make an app password for a CardDAV client; its 24 characters are shown this once "
                    + "(stored only as a hash). At most 20: too_many_app_passwords.",
                params: [FieldSpec("name", .string)],
                result: .object([FieldSpec("id", .string), FieldSpec("name", .string), FieldSpec("password", .string)])),
                        handler: { $0.create($1) }),
            MethodEntry(spec: MethodSpec(
                "account.app_password_list", summary: "This session's account's app passwords, oldest first (no secrets).",
                result: .object([FieldSpec("items", .array(AppPasswordListing.shape))])), handler: { $0.list($1) }),
            MethodEntry(spec: MethodSpec(
                "account.app_password_remove", summary: "Remove one of this session's account's app passwords by id.",
                params: [FieldSpec("id", .string)], result: .object([])), handler: { $0.remove($1) }),
            MethodEntry(spec: MethodSpec(
                "auth.dav_login",
                summary: "Log this connection in for CardDAV with an app password (or the account's password when "
                    + "it has no TOTP); the session may call only contacts.*, session.hello, session.resume, "
                    + "session.logout and rpc.describe, and so may its token's.",
                params: [FieldSpec("username", .string), FieldSpec("password", .string)],
                result: .object([FieldSpec("username", .string), FieldSpec("token", .string)])),
                        handler: { $0.davLogIn($1) }),
        ]
    }
}
