import RosterCore
import RosterRuntime
import RosterProtocol
import RosterStorage

/// What `admin.users.*` needs beyond the account procedures: who is an administrator, and the sessions a lock or
/// a deletion ends. The session book; a double in a unit test.
protocol AdminUserSessions: AnyObject {
    associatedtype Host: CallHost
    /// Root, or the user the daemon runs as.
    func isAdmin(_ peer: PeerCredentials) -> Bool
    /// Every session of the account, on every connection, logs out (`session` `user: null`).
    func endSessions(of account: AccountID)
    /// The account is gone: as `account.delete` propagates it.
    func accountDeleted(_ deleted: DeletedAccount)
}

/// `admin.users.*` (protocol.md §Administering users): find, read, lock, unlock, delete an account and clear its failed log-ins. For
/// root and the daemon's own user only (`forbidden` otherwise, before anything is read).
final class AdminUsersMethods<Sessions: AdminUserSessions> {
    typealias AdminCall = RequestCall<Sessions.Host>

    /// `admin.users.list`'s page size when none is asked for, and the most one page holds.
    static var defaultLimit: Int64 { 100 }
    static var maxLimit: Int64 { 1_000 }

    private let accounts: AccountProcedures
    private unowned let sessions: Sessions

    init(accounts: AccountProcedures, sessions: Sessions) {
        self.accounts = accounts
        self.sessions = sessions
    }

    /// The call's `username`, or nil when the peer is no administrator (the call answered `forbidden`).
    private func admitted(_ call: AdminCall) -> String? {
        guard call.mayAdminister(sessions.isAdmin) else {
            call.fail(.forbidden)
            return nil
        }
        return call.params.string("username") ?? ""
    }

    func list(_ call: AdminCall) {
        guard admitted(call) != nil else { return }
        let limit = Int(call.params.int("limit") ?? Self.defaultLimit)
        let offset = Int(call.params.int("offset") ?? 0)
        accounts.listAccounts(matching: call.params.string("query"), limit: limit, offset: offset,
                              charge: call.connection.queueCharge) { result in
            call.finish(result.map { page in
                ["items": .array(page.items.map { .object(Self.described($0)) }), "total": .int(Int64(page.total))]
            })
        }
    }

    func show(_ call: AdminCall) {
        guard let username = admitted(call) else { return }
        accounts.adminView(of: username, charge: call.connection.queueCharge) { result in
            call.finish(result.map { view in
                let summary = view.summary
                return ["user": .object(Self.described(summary) + [
                    ("locked_at", summary.lockedAtMs.map { .string(UTCTime.rfc3339(unixMs: $0)) } ?? .null),
                    ("locked_reason", summary.lockedReason.map(JSONValue.string) ?? .null),
                    ("failed_logins", .int(Int64(view.failedLogins))), ("sessions", .int(Int64(view.sessions))),
                ])]
            })
        }
    }

    func lock(_ call: AdminCall) {
        guard let username = admitted(call) else { return }
        let reason = call.params.string("reason").flatMap { $0.isEmpty ? nil : $0 }
        if let reason, let refusal = RosterError.refusedFreeText(reason, param: "reason", maxLength: FreeText.lockReasonMaxLength) {
            return call.fail(refusal)
        }
        accounts.lock(username, reason: reason, peer: call.auditPeer, charge: call.connection.queueCharge) { [sessions] result in
            call.finish(result.map { account in
                // Here at once; on other daemons by the storage's `sessionsEnded`.
                sessions.endSessions(of: account.id)
                return [:]
            })
        }
    }

    func unlock(_ call: AdminCall) {
        guard let username = admitted(call) else { return }
        accounts.unlock(username, peer: call.auditPeer, charge: call.connection.queueCharge) { call.finish($0.map { _ in [:] }) }
    }

    func delete(_ call: AdminCall) {
        guard let username = admitted(call) else { return }
        accounts.adminDelete(username, peer: call.auditPeer, charge: call.connection.queueCharge) { [sessions] result in
            call.finish(result.map { deleted in
                sessions.accountDeleted(deleted)
                return [:]
            })
        }
    }

    func resetFailures(_ call: AdminCall) {
        guard let username = admitted(call) else { return }
        accounts.resetFailures(of: username, peer: call.auditPeer, charge: call.connection.queueCharge) {
            call.finish($0.map { _ in [:] })
        }
    }

    /// An account in `admin.users.list`'s item shape.
    private static func described(_ summary: AccountSummary) -> [(String, JSONValue)] {
        let account = summary.account
        return [
            ("username", .string(account.username)),
            ("email", account.email.map(JSONValue.string) ?? .null),
            ("email_verified", .bool(account.email != nil && account.emailVerified)),
            ("created_at", .string(UTCTime.rfc3339(unixMs: account.createdAtMs))),
            ("last_login_at", summary.lastLoginAtMs.map { .string(UTCTime.rfc3339(unixMs: $0)) } ?? .null),
            ("locked", .bool(account.locked)),
            ("totp", .bool(summary.totp)),
        ]
    }
}

/// The daemon's `admin.users.*`, over its connections (`isAdmin`, `endSessions` and `accountDeleted` are the
/// book's own).
extension SessionBook: AdminUserSessions {}

extension AdminUsersMethods: MethodGroup {
    typealias Host = Sessions.Host

    /// The `admin.users.*` entries of the dispatcher's table.
    static var table: [MethodEntry<AdminUsersMethods>] {
        let username = FieldSpec("username", .string)
        let empty = Shape.object([])
        let item: [FieldSpec] = [
            FieldSpec("username", .string), FieldSpec("email", .described("string or null")),
            FieldSpec("email_verified", .boolean),
            FieldSpec("created_at", .string), FieldSpec("last_login_at", .described("string or null")),
            FieldSpec("locked", .boolean), FieldSpec("totp", .boolean),
        ]
        return [
            MethodEntry(spec: MethodSpec(
                "admin.users.list",
                summary: "Accounts by username, a page at a time; query: a part of the username or email (admin only).",
                params: [.optional("query", .string), .optional("limit", .integer(1...maxLimit)),
                         .optional("offset", .integer(0...Int64(Int32.max)))],
                result: .object([FieldSpec("items", .array(.object(item))), FieldSpec("total", .integer(0...Int64.max))])),
                   handler: { $0.list($1) }),
            MethodEntry(spec: MethodSpec(
                "admin.users.show", summary: "One account by username or email, with its lock's time and reason, failed log-ins and live sessions (admin only).",
                params: [username],
                result: .object([FieldSpec("user", .object(item + [
                    FieldSpec("locked_at", .described("string or null")), FieldSpec("locked_reason", .described("string or null")),
                    FieldSpec("failed_logins", .integer(0...Int64.max)), FieldSpec("sessions", .integer(0...Int64.max)),
                ]))])), handler: { $0.show($1) }),
            MethodEntry(spec: MethodSpec(
                "admin.users.lock",
                summary: "Lock an account: log-in, resume and recovery answer locked; its sessions end at once (admin only).",
                params: [username, .optional("reason", .string)], result: empty), handler: { $0.lock($1) }),
            MethodEntry(spec: MethodSpec(
                "admin.users.unlock", summary: "Unlock an account: log-in works again; its old sessions do not come back (admin only).",
                params: [username], result: empty), handler: { $0.unlock($1) }),
            MethodEntry(spec: MethodSpec(
                "admin.users.delete", summary: "Delete an account as account.delete does, without its password (admin only).",
                params: [username], result: empty), handler: { $0.delete($1) }),
            MethodEntry(spec: MethodSpec(
                "admin.users.reset_failures", summary: "Clear the account's failed log-ins, lifting its rate limit (admin only).",
                params: [username], result: empty), handler: { $0.resetFailures($1) }),
        ]
    }
}
