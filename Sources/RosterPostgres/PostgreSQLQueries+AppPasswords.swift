import RosterCore
import RosterStorage

// App passwords (protocol.md "App passwords"). The cap is counted after the account's row is locked in the
// addition's transaction (`lockAccountForMail`, the lock every write that counts an account's rows takes), so the
// next daemon's count, a statement whose snapshot starts after that lock is let go, holds every app password added
// before.
extension PostgreSQLQueries {
    static let appPasswordColumns = "id, account_id, name, hash, created_at, last_used_at"

    /// Rows (`appPasswordColumns`), oldest first.
    static func appPasswords(of account: AccountID) -> PGStatement {
        PGStatement("SELECT \(appPasswordColumns) FROM app_passwords WHERE account_id = $1::bigint ORDER BY created_at, id",
                    [.int(account)])
    }

    /// One row: the verdict (`gone`, `full`, `added`), the stored `created_at` when added, then the entry's stamp.
    /// Sent after `lockAccountForMail`, in its transaction, so the cap holds across daemons.
    static func addAppPassword(_ appPassword: StoredAppPassword, limit: Int, now: PGValue,
                               audit: AuditWrite?) -> PGStatement {
        var params: [PGValue] = [now, .text(appPassword.id), .int(appPassword.account), .text(appPassword.name),
                                 .bytes(appPassword.hash), .int(Int64(max(0, limit)))]
        let auditCTE = Self.audited(audit, time: .column("added.created_at"), source: "FROM added", params: &params)
        return PGStatement("""
            WITH clock AS (SELECT \(Self.now(1)) AS ms),
            verdict AS (
                SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM users WHERE id = $3::bigint) THEN 'gone'
                            WHEN (SELECT count(*) FROM app_passwords WHERE account_id = $3::bigint) >= $6::bigint THEN 'full'
                            ELSE 'add' END AS outcome,
                    clock.ms
                FROM clock),
            added AS (
                INSERT INTO app_passwords(\(appPasswordColumns))
                SELECT $2::text, $3::bigint, $4::text, $5::bytea, verdict.ms, NULL
                FROM verdict WHERE verdict.outcome = 'add'
                RETURNING created_at),
            \(auditCTE)
            SELECT CASE WHEN added.created_at IS NOT NULL THEN 'added' ELSE v.outcome END,
                added.created_at, a.id, a.time_ms
            FROM verdict v LEFT JOIN added ON true LEFT JOIN audited a ON true
            """, params)
    }

    /// One row (the entry's stamp last) when the account's app password was there and is deleted; none otherwise.
    static func removeAppPassword(of account: AccountID, id: String, now: PGValue, audit: AuditWrite?) -> PGStatement {
        var params: [PGValue] = [.text(id), .int(account)]
        let auditCTE = Self.audited(audit, time: .now(now), source: "FROM gone", params: &params)
        return PGStatement("""
            WITH gone AS (
                DELETE FROM app_passwords WHERE id = $1::text AND account_id = $2::bigint RETURNING account_id),
            \(auditCTE)
            SELECT gone.account_id, a.id, a.time_ms FROM gone LEFT JOIN audited a ON true
            """, params)
    }

    /// One row when the app password is there and its last use is stored; none otherwise.
    static func touchAppPassword(of account: AccountID, id: String, usedMs: Int64) -> PGStatement {
        PGStatement("""
            UPDATE app_passwords SET last_used_at = $3::bigint WHERE id = $1::text AND account_id = $2::bigint
            RETURNING id
            """, [.text(id), .int(account), .int(usedMs)])
    }
}

extension PGRow {
    /// An app password from `PostgreSQLQueries.appPasswordColumns`, starting at `first`; nil for a row that cannot
    /// be one.
    func appPassword(from first: Int = 0) -> StoredAppPassword? {
        guard let id = text(first), let account = int(first + 1), let name = text(first + 2),
              let hash = bytes(first + 3), let created = int(first + 4) else { return nil }
        return StoredAppPassword(id: id, account: account, name: name, hash: hash, createdMs: created,
                                 lastUsedMs: int(first + 5))
    }
}
