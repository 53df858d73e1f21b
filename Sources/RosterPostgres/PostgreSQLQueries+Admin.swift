import RosterCore
import RosterStorage

// The administrator's statements (protocol.md §Administering users). A query matches the folded keys (`username_key`, `email_key`) with
// `strpos`, so no character of it is a pattern; order is by `username_key` bytewise (`COLLATE "C"`), as SQLite's
// `NOCASE` orders, whatever the database's collation. A lock announces `sessions-ended` in its own statement.
extension PostgreSQLQueries {
    /// id, canonical, display, email, created_at, last_login_at, locked_at, locked_reason, has TOTP,
    /// email_verified.
    static let summaryColumns = """
        u.id, u.canonical, u.display, u.email, u.created_at, u.last_login_at, u.locked_at, u.locked_reason,
        EXISTS (SELECT 1 FROM totp t WHERE t.user_id = u.id AND t.sealed IS NOT NULL), u.email_verified
        """

    private static let matching = "($1::text = '' OR strpos(u.username_key, $1::text) > 0 OR strpos(u.email_key, $1::text) > 0)"

    /// A page (`summaryColumns`), then one row (the count of matches).
    static func listAccounts(matching query: String, limit: Int, offset: Int) -> [PGStatement] {
        let key = UsernameKey.folded(query)
        return [PGStatement("""
                    SELECT \(summaryColumns) FROM users u WHERE \(matching)
                    ORDER BY u.username_key COLLATE "C" LIMIT $2::bigint OFFSET $3::bigint
                    """, [.text(key), .int(Int64(max(0, limit))), .int(Int64(max(0, offset)))]),
                PGStatement("SELECT count(*) FROM users u WHERE \(matching)", [.text(key)])]
    }

    static func accountSummary(_ identifier: AccountIdentifier) -> PGStatement {
        let (column, key) = switch identifier {
        case .username(let canonical): ("username_key", UsernameKey.folded(canonical))
        case .email(let email): ("email_key", UsernameKey.folded(email))
        }
        return PGStatement("SELECT \(summaryColumns) FROM users u WHERE u.\(column) = $1::text", [.text(key)])
    }

    /// One row (the entry's stamp last) when the account was there; the lock keeps its first time, and its entry
    /// is stamped with the lock's now.
    static func lockAccount(_ account: AccountID, reason: String?, now: PGValue, notification: String,
                            audit: AuditWrite?) -> PGStatement {
        var params: [PGValue] = [now, .int(account), .optional(reason), .text(notification)]
        let auditCTE = Self.audited(audit, time: .column("clock.ms"), source: "FROM clock, locked", params: &params)
        return PGStatement("""
            WITH clock AS (SELECT \(Self.now(1)) AS ms),
            locked AS (
                UPDATE users SET locked_at = COALESCE(locked_at, clock.ms), locked_reason = $3::text FROM clock
                WHERE id = $2::bigint RETURNING id),
            \(auditCTE)
            SELECT pg_notify('\(ChangeNotification.channel)', $4::text), a.id, a.time_ms FROM locked LEFT JOIN audited a ON true
            """, params)
    }

    /// One row (the entry's stamp last) when the account was there; its tokens (dead since the lock) go.
    static func unlockAccount(_ account: AccountID, now: PGValue, audit: AuditWrite?) -> PGStatement {
        var params: [PGValue] = [.int(account)]
        let auditCTE = Self.audited(audit, time: .now(now), source: "FROM unlocked", params: &params)
        return PGStatement("""
            WITH unlocked AS (
                UPDATE users SET locked_at = NULL, locked_reason = NULL WHERE id = $1::bigint RETURNING id),
            gone AS (DELETE FROM session_tokens WHERE user_id IN (SELECT id FROM unlocked)),
            \(auditCTE)
            SELECT u.id, a.id, a.time_ms FROM unlocked u LEFT JOIN audited a ON true
            """, params)
    }

    /// One row: the entry's stamp.
    static func resetFailures(keys: [String], now: PGValue, audit: AuditWrite?) -> PGStatement {
        var params: [PGValue] = [.text(PGArrayLiteral.texts(keys))]
        let auditCTE = Self.audited(audit, time: .now(now), source: "", params: &params)
        return PGStatement("""
            WITH gone AS (DELETE FROM login_failures WHERE key = ANY($1::text[])),
            \(auditCTE)
            SELECT a.id, a.time_ms FROM (SELECT 1) one LEFT JOIN audited a ON true
            """, params)
    }
}
