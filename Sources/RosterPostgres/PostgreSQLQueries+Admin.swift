import RosterCore
import RosterStorage

// The administrator's statements (issue 16). A query matches the folded keys (`username_key`, `email_key`) with
// `strpos`, so no character of it is a pattern; order is by `username_key` bytewise (`COLLATE "C"`), as SQLite's
// `NOCASE` orders, whatever the database's collation. A lock announces `sessions-ended` in its own statement.
extension PostgreSQLQueries {
    /// id, canonical, display, email, created_at, last_login_at, locked_at, locked_reason, has TOTP.
    static let summaryColumns = """
        u.id, u.canonical, u.display, u.email, u.created_at, u.last_login_at, u.locked_at, u.locked_reason,
        EXISTS (SELECT 1 FROM totp t WHERE t.user_id = u.id AND t.sealed IS NOT NULL)
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

    /// One row when the account was there; the lock keeps its first time.
    static func lockAccount(_ account: AccountID, reason: String?, now: PGValue, notification: String) -> PGStatement {
        PGStatement("""
            WITH locked AS (
                UPDATE users SET locked_at = COALESCE(locked_at, \(Self.now(1))), locked_reason = $3::text
                WHERE id = $2::bigint RETURNING id)
            SELECT pg_notify('\(ChangeNotification.channel)', $4::text) FROM locked
            """, [now, .int(account), .optional(reason), .text(notification)])
    }

    /// One row when the account was there; its tokens (dead since the lock) go.
    static func unlockAccount(_ account: AccountID) -> PGStatement {
        PGStatement("""
            WITH unlocked AS (
                UPDATE users SET locked_at = NULL, locked_reason = NULL WHERE id = $1::bigint RETURNING id),
            gone AS (DELETE FROM session_tokens WHERE user_id IN (SELECT id FROM unlocked))
            SELECT id FROM unlocked
            """, [.int(account)])
    }

    static func resetFailures(keys: [String]) -> PGStatement {
        PGStatement("DELETE FROM login_failures WHERE key = ANY($1::text[])", [.text(PGArrayLiteral.texts(keys))])
    }
}
