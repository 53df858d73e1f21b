import RosterCore
import RosterStorage

// Passkeys and user handles (protocol.md §Storage). The cap is counted after the account's row is locked in the
// addition's transaction (`lockAccountForMail`, the lock every write that counts an account's rows takes), so the
// next daemon's count, a statement whose snapshot starts after that lock is let go, holds every passkey added
// before. A credential id is claimed by its primary key (`ON CONFLICT DO NOTHING`): of two daemons adding one id
// at once, the second waits for the first's commit and inserts nothing. The sign count moves by one conditional
// UPDATE, which re-reads the row after waiting for its lock, so of two log-ins with one count exactly one moves it.
extension PostgreSQLQueries {
    private static let passkeyColumnNames = ["credential_id", "account_id", "algorithm", "public_key", "sign_count",
                                             "transports", "name", "created_at", "last_used_at"]
    static let passkeyColumns = passkeyColumnNames.joined(separator: ", ")

    /// The account's handle stored when it has none and the account is there (no row, nothing done, otherwise);
    /// then, in a statement of its own (a snapshot that holds what another daemon committed meanwhile), the
    /// handle as stored.
    static func passkeyUserHandle(of account: AccountID, candidate: [UInt8]) -> [PGStatement] {
        [PGStatement("""
            INSERT INTO passkey_handles(account_id, handle) SELECT id, $2::bytea FROM users WHERE id = $1::bigint
            ON CONFLICT (account_id) DO NOTHING
            """, [.int(account), .bytes(candidate)]),
         PGStatement("SELECT handle FROM passkey_handles WHERE account_id = $1::bigint", [.int(account)])]
    }

    /// One row (`credentialColumns`) for the account holding `handle`.
    static func account(forUserHandle handle: [UInt8]) -> PGStatement {
        PGStatement("""
            SELECT \(credentialColumns) FROM passkey_handles h JOIN users u ON u.id = h.account_id
            LEFT JOIN totp t ON t.user_id = u.id WHERE h.handle = $1::bytea
            """, [.bytes(handle)])
    }

    /// Rows (`passkeyColumns`), oldest first.
    static func passkeys(of account: AccountID) -> PGStatement {
        PGStatement("SELECT \(passkeyColumns) FROM passkeys WHERE account_id = $1::bigint ORDER BY created_at, credential_id",
                    [.int(account)])
    }

    /// One row (`credentialColumns` of the owner, then `passkeyColumns`) for the passkey.
    static func passkey(credentialID: [UInt8]) -> PGStatement {
        PGStatement("""
            SELECT \(credentialColumns), \(passkeyColumnNames.map { "p." + $0 }.joined(separator: ", "))
            FROM passkeys p JOIN users u ON u.id = p.account_id LEFT JOIN totp t ON t.user_id = u.id
            WHERE p.credential_id = $1::bytea
            """, [.bytes(credentialID)])
    }

    /// One row: the verdict (`gone`, `duplicate`, `full`, `added`), the stored `created_at` when added, then the
    /// entry's stamp. Sent after `lockAccountForMail`, in its transaction, so the cap holds across daemons.
    static func addPasskey(_ passkey: StoredPasskey, limit: Int, now: PGValue, audit: AuditWrite?) -> PGStatement {
        var params: [PGValue] = [now, .bytes(passkey.credentialID), .int(passkey.account), .int(Int64(passkey.algorithm)),
                                 .bytes(passkey.publicKey), .int(Int64(passkey.signCount)),
                                 .text(PasskeyTransports.encoded(passkey.transports)), .text(passkey.name),
                                 .int(Int64(max(0, limit)))]
        let auditCTE = Self.audited(audit, time: .column("added.created_at"), source: "FROM added", params: &params)
        return PGStatement("""
            WITH clock AS (SELECT \(Self.now(1)) AS ms),
            verdict AS (
                SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM users WHERE id = $3::bigint) THEN 'gone'
                            WHEN EXISTS (SELECT 1 FROM passkeys WHERE credential_id = $2::bytea) THEN 'duplicate'
                            WHEN (SELECT count(*) FROM passkeys WHERE account_id = $3::bigint) >= $9::bigint THEN 'full'
                            ELSE 'add' END AS outcome,
                    clock.ms
                FROM clock),
            added AS (
                INSERT INTO passkeys(\(passkeyColumns))
                SELECT $2::bytea, $3::bigint, $4::bigint, $5::bytea, $6::bigint, $7::text, $8::text, verdict.ms, NULL
                FROM verdict WHERE verdict.outcome = 'add'
                ON CONFLICT (credential_id) DO NOTHING
                RETURNING created_at),
            \(auditCTE)
            SELECT CASE WHEN added.created_at IS NOT NULL THEN 'added' WHEN v.outcome = 'add' THEN 'duplicate'
                        ELSE v.outcome END,
                added.created_at, a.id, a.time_ms
            FROM verdict v LEFT JOIN added ON true LEFT JOIN audited a ON true
            """, params)
    }

    /// One row (the entry's stamp last) when the account's passkey was there and is deleted, its mails queued
    /// with it; none otherwise.
    static func removePasskey(of account: AccountID, credentialID: [UInt8], now: PGValue, audit: AuditWrite?,
                              mail: [QueuedMail]) -> PGStatement {
        var params: [PGValue] = [.bytes(credentialID), .int(account)]
        let mailCTEs = Self.queuedMail(mail, source: MailSource(from: "FROM gone", account: "gone.account_id"), now: now,
                                       params: &params)
        let auditCTE = Self.audited(audit, time: .now(now), source: "FROM gone", params: &params)
        return PGStatement("""
            WITH gone AS (
                DELETE FROM passkeys WHERE credential_id = $1::bytea AND account_id = $2::bigint RETURNING account_id),
            \(mailCTEs)
            \(auditCTE)
            SELECT gone.account_id, a.id, a.time_ms FROM gone LEFT JOIN audited a ON true
            """, params)
    }

    /// The log-in's count and time stored when the counter rule lets it (rows, `passkeyColumns`, as stored now;
    /// none when it refused or the passkey is gone); then, in a statement of its own, the count as it stands.
    static func usePasskey(credentialID: [UInt8], signCount: UInt32, usedMs: Int64) -> [PGStatement] {
        [PGStatement("""
            UPDATE passkeys SET sign_count = $2::bigint, last_used_at = $3::bigint
            WHERE credential_id = $1::bytea AND ((sign_count = 0 AND $2::bigint = 0) OR $2::bigint > sign_count)
            RETURNING \(passkeyColumns)
            """, [.bytes(credentialID), .int(Int64(signCount)), .int(usedMs)]),
         PGStatement("SELECT sign_count FROM passkeys WHERE credential_id = $1::bytea", [.bytes(credentialID)])]
    }
}

extension PGRow {
    /// A passkey from `PostgreSQLQueries.passkeyColumns`, starting at `first`; nil for a row that cannot be one.
    func passkey(from first: Int = 0) -> StoredPasskey? {
        guard let credentialID = bytes(first), let account = int(first + 1), let algorithm = int(first + 2),
              let publicKey = bytes(first + 3), let signCount = int(first + 4).flatMap(UInt32.init(exactly:)),
              let transports = text(first + 5).flatMap(PasskeyTransports.decoded), let name = text(first + 6),
              let created = int(first + 7) else { return nil }
        return StoredPasskey(credentialID: credentialID, account: account, algorithm: Int(algorithm),
                             publicKey: publicKey, signCount: signCount, transports: transports, name: name,
                             createdMs: created, lastUsedMs: int(first + 8))
    }
}
