import RosterCore
import RosterRuntime
import RosterProtocol
import RosterStorage

/// What the account-life methods need beyond the account procedures: the sessions that a change of the account
/// concerns, on every connection. The session book; a double in a unit test.
protocol AccountLifeSessions: AccountSessions {
    /// Ends every session bound to one of `hashes`, except `origin`'s (see `SessionBook.tokensRevoked`).
    func tokensRevoked(_ hashes: [[UInt8]], except origin: Host?)
    /// The account is gone: its sessions end everywhere, forms holding its name or email re-check, its
    /// contacts index goes.
    func accountDeleted(_ deleted: DeletedAccount)
    /// Every session of the account now shows it as it is (a new email).
    func accountChanged(_ account: Account, previousEmail: String?)
    /// The user's contacts, as one vCard text, no longer than `byteLimit` (else `answer_too_large`).
    func exportContacts(of account: Account, byteLimit: Int, charge: QueueCharge, cancelled: Locked<Bool>,
                        completion: @escaping (Result<String, RosterError>) -> Void)
}

/// A user's own account (protocol.md §The life of an account): `account.*`, `session.list`, `session.revoke`,
/// `session.revoke_others` and `auth.recover`. Each acts on the session's user (`unauthenticated` without one),
/// except `auth.recover`, which logs in.
final class AccountLifeMethods<Sessions: AccountLifeSessions> {
    typealias LifeCall = RequestCall<Sessions.Host>

    private let accounts: AccountProcedures
    private unowned let sessions: Sessions
    private var logger: Logger { sessions.logger }

    init(accounts: AccountProcedures, sessions: Sessions) {
        self.accounts = accounts
        self.sessions = sessions
    }

    private func secret(_ call: LifeCall, _ name: String) -> Secret { Secret(call.params.string(name) ?? "") }

    // MARK: Reading

    func show(_ call: LifeCall) {
        guard let user = call.loggedInUser() else { return }
        let charge = call.connection.queueCharge
        accounts.stored(user, charge: charge) { [self] stored in
            guard case .success(let user) = stored else { return call.finish(stored.map { _ in [:] }) }
            accounts.security(of: user, charge: charge) { result in
                call.finish(result.map { Self.described(user, $0) })
            }
        }
    }

    /// `account.show`'s answer and `account.export`'s `account`.
    private static func described(_ user: Account, _ security: AccountSecurity) -> JSONValue {
        [
            "username": .string(user.username),
            "email": user.email.map(JSONValue.string) ?? .null,
            "email_verified": .bool(user.email != nil && user.emailVerified),
            "created_at": .string(UTCTime.rfc3339(unixMs: user.createdAtMs)),
            "totp": .bool(security.totp != nil),
            "recovery_codes_left": .int(Int64(security.recoveryCodesLeft)),
        ]
    }

    func export(_ call: LifeCall) where Sessions.Host: ContactsCallHost {
        guard let user = call.loggedInUser() else { return }
        let charge = call.connection.queueCharge
        let current = call.session.tokenHash
        accounts.stored(user, charge: charge) { [self] stored in
            guard case .success(let user) = stored else { return call.finish(stored.map { _ in [:] }) }
            export(user, current: current, call)
        }
    }

    private func export(_ user: Account, current: [UInt8]?, _ call: LifeCall) where Sessions.Host: ContactsCallHost {
        let charge = call.connection.queueCharge
        accounts.security(of: user, charge: charge) { [self] security in
            guard case .success(let security) = security else { return call.finish(security.map { _ in [:] }) }
            accounts.sessions(of: user, charge: charge) { [self] listed in
                guard case .success(let listed) = listed else { return call.finish(listed.map { _ in [:] }) }
                accounts.passkeys(of: user, charge: charge) { [self] passkeys in
                    guard case .success(let passkeys) = passkeys else { return call.finish(passkeys.map { _ in [:] }) }
                    accounts.appPasswords(of: user, charge: charge) { [self] appPasswords in
                        guard case .success(let appPasswords) = appPasswords else {
                            return call.finish(appPasswords.map { _ in [:] })
                        }
                        sessions.exportContacts(of: user, byteLimit: call.connection.maxAnswerBytes, charge: charge,
                                                cancelled: call.connection.closedFlag) { contacts in
                            call.finish(contacts.map { vcard in
                                [
                                    "account": Self.described(user, security),
                                    "sessions": .array(listed.map { Self.described($0, current: current) }),
                                    // Names and times only: a public key is no one's business outside the daemon,
                                    // and an app password's hash is no one's at all.
                                    "passkeys": .array(passkeys.map(PasskeyListing.described)),
                                    "app_passwords": .array(appPasswords.map(AppPasswordListing.described)),
                                    "contacts": ["format": "vcard", "data": .string(vcard)],
                                ]
                            })
                        }
                    }
                }
            }
        }
    }

    // MARK: Sessions

    /// A session's public id: the first 8 bytes of its token's stored hash, in hex. A hash of a hash, it resumes
    /// nothing, and the server finds the token again by listing the user's.
    static func sessionID(_ tokenHash: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: tokenHash.prefix(8).flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }, as: UTF8.self)
    }

    private static func described(_ session: StoredSession, current: [UInt8]?) -> JSONValue {
        [
            "id": .string(sessionID(session.tokenHash)),
            "created_at": .string(UTCTime.rfc3339(unixMs: session.createdAtMs)),
            "last_used_at": .string(UTCTime.rfc3339(unixMs: session.lastUsedAtMs)),
            "client": session.client.map(JSONValue.string) ?? .null,
            "current": .bool(session.tokenHash == current),
        ]
    }

    func listSessions(_ call: LifeCall) {
        guard let user = call.loggedInUser() else { return }
        let current = call.session.tokenHash
        accounts.sessions(of: user, charge: call.connection.queueCharge) { result in
            call.finish(result.map { ["items": .array($0.map { Self.described($0, current: current) })] })
        }
    }

    func revokeSession(_ call: LifeCall) {
        guard let user = call.loggedInUser() else { return }
        let id = call.params.string("id") ?? ""
        let charge = call.connection.queueCharge
        call.asAuthChange { [self] answer in
            accounts.sessions(of: user, charge: charge) { [self] listed in
                guard case .success(let listed) = listed else { return answer(listed.map { _ in [:] }) }
                guard let hash = listed.first(where: { Self.sessionID($0.tokenHash) == id })?.tokenHash else {
                    return answer(.failure(.notFound))
                }
                let entry = AuditRecord(event: .sessionRevoked, username: user.username, peer: call.auditPeer)
                accounts.revoke(tokenHash: hash, entry: entry, charge: charge) { [self] result in
                    answer(result.map {
                        // This connection's own token too: it logs out like every other holder.
                        sessions.tokensRevoked([hash], except: nil)
                        return [:]
                    })
                }
            }
        }
    }

    func revokeOthers(_ call: LifeCall) {
        guard let user = call.loggedInUser() else { return }
        let keeping = call.session.tokenHash
        accounts.revokeTokens(of: user, except: keeping, peer: call.auditPeer, charge: call.connection.queueCharge) {
            [self] result in
            call.finish(result.map { revoked in
                sessions.tokensRevoked(revoked, except: call.connection)
                return ["revoked": .int(Int64(revoked.count))]
            })
        }
    }

    // MARK: Changes

    func changePassword(_ call: LifeCall) {
        guard let user = call.loggedInUser() else { return }
        accounts.changePassword(of: user, current: secret(call, "current"), new: secret(call, "new"),
                                keeping: call.session.tokenHash, peer: call.auditPeer,
                                charge: call.connection.queueCharge, locale: call.session.locale) { [self] result in
            call.finish(result.map { revoked in
                sessions.tokensRevoked(revoked, except: call.connection)
                return ["revoked": .int(Int64(revoked.count))]
            })
        }
    }

    func changeEmail(_ call: LifeCall) {
        guard let user = call.loggedInUser() else { return }
        accounts.changeEmail(of: user, password: secret(call, "password"), email: call.params.string("email") ?? "",
                             peer: call.auditPeer, charge: call.connection.queueCharge,
                             locale: call.session.locale) { [self] result in
            call.finish(result.map { changed in
                sessions.accountChanged(changed, previousEmail: user.email)
                return ["email": changed.email.map(JSONValue.string) ?? .null]
            })
        }
    }

    func delete(_ call: LifeCall) {
        guard let user = call.loggedInUser() else { return }
        call.asAuthChange { [self] answer in
            accounts.deleteAccount(user, password: secret(call, "password"), peer: call.auditPeer,
                                   charge: call.connection.queueCharge, locale: call.session.locale) { [self] result in
                answer(result.map { deleted in
                    sessions.accountDeleted(deleted)
                    return [:]
                })
            }
        }
    }

    // MARK: Recovery

    func recoveryCodes(_ call: LifeCall) {
        guard let user = call.loggedInUser() else { return }
        accounts.replaceRecoveryCodes(of: user, password: secret(call, "password"), peer: call.auditPeer,
                                      charge: call.connection.queueCharge, locale: call.session.locale) { result in
            call.finish(result.map { ["codes": .array($0.map(JSONValue.string))] })
        }
    }

    func recover(_ call: LifeCall) {
        let username = call.params.string("username") ?? ""
        let code = call.params.string("code") ?? ""
        call.asAuthChange { [self] answer in
            accounts.recover(username: username, code: code, newPassword: secret(call, "new_password"),
                             peer: call.auditPeer, charge: call.connection.queueCharge,
                             locale: call.session.locale) { [self] result in
                switch result {
                case .failure(let error):
                    logger.notice("recovery refused: \(error.reason)", [("ROSTER_PEER_UID", String(call.peer.uid))])
                    answer(.failure(error))
                case .success(let recovered):
                    sessions.tokensRevoked(recovered.revoked, except: nil)
                    answer(recovered.token.map { token in
                        sessions.logIn(call.connection, as: recovered.account, tokenHash: token.hash)
                        return ["username": .string(recovered.account.username), "token": .string(token.bearer)]
                    })
                }
            }
        }
    }

    // MARK: Email

    func sendVerification(_ call: LifeCall) {
        guard let user = call.loggedInUser() else { return }
        accounts.sendVerification(of: user, peer: call.auditPeer, charge: call.connection.queueCharge,
                                  locale: call.session.locale) { result in
            call.finish(result.map { [:] })
        }
    }

    func verifyEmail(_ call: LifeCall) {
        guard let user = call.loggedInUser() else { return }
        accounts.verifyEmail(of: user, code: call.params.string("code") ?? "", peer: call.auditPeer,
                             charge: call.connection.queueCharge) { [self] result in
            call.finish(result.map { verified in
                sessions.accountChanged(verified, previousEmail: user.email)
                return ["email_verified": .bool(true)]
            })
        }
    }

    func startRecovery(_ call: LifeCall) {
        accounts.startRecovery(username: call.params.string("username") ?? "", peer: call.auditPeer,
                               charge: call.connection.queueCharge, locale: call.session.locale) { result in
            call.finish(result.map { [:] })
        }
    }

    // MARK: TOTP

    func enrollTOTP(_ call: LifeCall) {
        guard let user = call.loggedInUser() else { return }
        accounts.enrollTOTP(of: user, password: secret(call, "password"), peer: call.auditPeer,
                            charge: call.connection.queueCharge) { result in
            call.finish(result.map { ["secret": .string($0.secret), "uri": .string($0.uri)] })
        }
    }

    func confirmTOTP(_ call: LifeCall) {
        guard let user = call.loggedInUser() else { return }
        accounts.confirmTOTP(of: user, code: LoginRules.typedCode(call.params.string("code") ?? ""), peer: call.auditPeer,
                             charge: call.connection.queueCharge) { result in
            call.finish(result.map { [:] })
        }
    }

    func disableTOTP(_ call: LifeCall) {
        guard let user = call.loggedInUser() else { return }
        accounts.disableTOTP(of: user, password: secret(call, "password"), peer: call.auditPeer,
                             charge: call.connection.queueCharge, locale: call.session.locale) { result in
            call.finish(result.map { [:] })
        }
    }
}

/// The daemon's account-life methods, over its connections (`accountDeleted` is the book's own).
extension SessionBook: AccountLifeSessions {}

/// A user's whole address book as one vCard text, written off the loop; past `byteLimit` it is
/// `answer_too_large` rather than a part taken for the whole.
struct VCardBook: ContactExportSink {
    let byteLimit: Int
    private var text = ""
    private var overflowed = false

    init(byteLimit: Int) {
        self.byteLimit = byteLimit
    }

    mutating func add(_ contact: Contact) -> Bool {
        let card = ContactFormat.vcard.serialize(contact)
        guard text.utf8.count + card.utf8.count <= byteLimit else {
            overflowed = true
            return false
        }
        text += card
        return true
    }

    mutating func finish(more: Bool) -> Result<String, RosterError> {
        guard !more && !overflowed else { return .failure(.answerTooLarge(size: byteLimit + 1, limit: byteLimit)) }
        return .success(text)
    }
}

extension AccountLifeMethods: MethodGroup where Sessions.Host: ContactsCallHost {
    typealias Host = Sessions.Host

    /// The account-life methods' entries of the dispatcher's table; each handler is handed the group when called.
    static var table: [MethodEntry<AccountLifeMethods>] {
        let password = FieldSpec("password", .string)
        let empty = Shape.object([])
        let revoked = Shape.object([FieldSpec("revoked", .integer(0...Int64.max))])
        let session = Shape.object([
            FieldSpec("id", .string), FieldSpec("created_at", .string), FieldSpec("last_used_at", .string),
            FieldSpec("client", .described("string or null")), FieldSpec("current", .boolean),
        ])
        let account = Shape.object([
            FieldSpec("username", .string), FieldSpec("email", .described("string or null")),
            FieldSpec("email_verified", .boolean), FieldSpec("created_at", .string), FieldSpec("totp", .boolean),
            FieldSpec("recovery_codes_left", .integer(0...Int64.max)),
        ])
        return [
            MethodEntry(spec: MethodSpec("account.show", summary: "This session's account: email and whether it is verified, created_at, TOTP, recovery codes left.",
                                    result: account), handler: { $0.show($1) }),
            MethodEntry(spec: MethodSpec(
                "account.change_password",
                summary: "Change the password (preset's rules, not the current one); revokes every other session.",
                params: [FieldSpec("current", .string), FieldSpec("new", .string)], result: revoked),
                   handler: { $0.changePassword($1) }),
            MethodEntry(spec: MethodSpec(
                "account.change_email", summary: "Set the email (\"\" removes it), by the registration's rules.",
                params: [password, FieldSpec("email", .string)],
                result: .object([FieldSpec("email", .described("string or null"))])),
                   handler: { $0.changeEmail($1) }),
            MethodEntry(spec: MethodSpec(
                "account.delete", summary: "Delete the account, its contacts, tokens, codes and TOTP for good.",
                params: [password], result: empty), handler: { $0.delete($1) }),
            MethodEntry(spec: MethodSpec(
                "account.export", summary: "Everything stored about the user except secrets.",
                result: .object([FieldSpec("account", account), FieldSpec("sessions", .array(session)),
                                 FieldSpec("passkeys", .array(PasskeyListing.shape)),
                                 FieldSpec("app_passwords", .array(AppPasswordListing.shape)),
                                 FieldSpec("contacts", .object([FieldSpec("format", .oneOf(["vcard"])),
                                                                FieldSpec("data", .string)]))])),
                   handler: { $0.export($1) }),
            MethodEntry(spec: MethodSpec("session.list", summary: "This user's live sessions.",
                                    result: .object([FieldSpec("items", .array(session))])),
                   handler: { $0.listSessions($1) }),
            MethodEntry(spec: MethodSpec("session.revoke", summary: "Revoke one of this user's sessions by its id.",
                                    params: [FieldSpec("id", .string)], result: empty),
                   handler: { $0.revokeSession($1) }),
            MethodEntry(spec: MethodSpec("session.revoke_others", summary: "Revoke every session of this user but this one.",
                                    result: revoked), handler: { $0.revokeOthers($1) }),
            MethodEntry(spec: MethodSpec(
                "account.recovery_codes", summary: "Ten new single-use recovery codes, replacing older ones; shown once.",
                params: [password], result: .object([FieldSpec("codes", .array(.string))])),
                   handler: { $0.recoveryCodes($1) }),
            MethodEntry(spec: MethodSpec(
                "auth.recover", summary: "Set a new password with a recovery code or a mailed code, and log this connection in.",
                params: [FieldSpec("username", .string), FieldSpec("code", .string), FieldSpec("new_password", .string)],
                result: .object([FieldSpec("username", .string), FieldSpec("token", .string)])),
                   handler: { $0.recover($1) }),
            MethodEntry(spec: MethodSpec(
                "auth.recover_start",
                summary: "Mail a recovery code and link to the account's verified email, if it has one; the same answer either way.",
                params: [FieldSpec("username", .string)], result: empty), handler: { $0.startRecovery($1) }),
            MethodEntry(spec: MethodSpec(
                "account.email_verify_send", summary: "Mail a verification code to this session's account's email.",
                result: empty), handler: { $0.sendVerification($1) }),
            MethodEntry(spec: MethodSpec(
                "account.email_verify", summary: "Verify this session's account's email with the mailed code.",
                params: [FieldSpec("code", .string)], result: .object([FieldSpec("email_verified", .boolean)])),
                   handler: { $0.verifyEmail($1) }),
            MethodEntry(spec: MethodSpec(
                "account.totp_enroll", summary: "A new TOTP secret (RFC 6238), pending until confirmed; shown once.",
                params: [password], result: .object([FieldSpec("secret", .string), FieldSpec("uri", .string)])),
                   handler: { $0.enrollTOTP($1) }),
            MethodEntry(spec: MethodSpec(
                "account.totp_confirm", summary: "Confirm the pending TOTP secret with a code; log-in needs codes from now on.",
                params: [FieldSpec("code", .string)], result: empty), handler: { $0.confirmTOTP($1) }),
            MethodEntry(spec: MethodSpec("account.totp_disable", summary: "Turn TOTP off.", params: [password], result: empty),
                   handler: { $0.disableTOTP($1) }),
        ]
    }
}
