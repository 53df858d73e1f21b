import RosterStorage

// The life of an account (protocol.md §The life of an account). Each revoked token is announced with its own `token-revoked` notification,
// written by the statement that deletes it (the payload's prefix is bound, each hash's hex appended by
// `encode(token_hash, 'hex')`), so the others hear of exactly the tokens that went, when they went.
extension PostgreSQLQueries {
    /// `userColumns` of `u`, then the confirmed TOTP (`sealed`, `last_step`) of the joined `t`, then whether the
    /// account is locked, then whether its email is verified.
    static let credentialColumns = """
        u.id, u.canonical, u.display, u.email, u.password_hash, u.created_at, t.sealed, t.last_step, u.locked_at IS NOT NULL,
        u.email_verified
        """

    static func credential(of account: AccountID) -> PGStatement {
        PGStatement("""
            SELECT \(credentialColumns) FROM users u LEFT JOIN totp t ON t.user_id = u.id WHERE u.id = $1::bigint
            """, [.int(account)])
    }

    /// One row (sealed, pending, last_step, codes left) when the account is there.
    static func security(of account: AccountID) -> PGStatement {
        PGStatement("""
            SELECT t.sealed, t.pending, t.last_step, (SELECT count(*) FROM recovery_codes r WHERE r.user_id = u.id)
            FROM users u LEFT JOIN totp t ON t.user_id = u.id WHERE u.id = $1::bigint
            """, [.int(account)])
    }

    /// Rows (a hash or NULL, then the entry's stamp) of the account's tokens deleted, all but `keeping`, each
    /// announced; one row of NULL hash when none was. The entry is written when the account is there, tokens or not.
    static func revokeTokens(of account: AccountID, except keeping: [UInt8]?, announcing prefix: String, now: PGValue,
                             audit: AuditWrite?) -> PGStatement {
        var params: [PGValue] = [.int(account), keeping.map(PGValue.bytes) ?? .null, .text(prefix)]
        let auditCTE = Self.audited(audit, time: .now(now), source: "WHERE EXISTS (SELECT 1 FROM users WHERE id = $1::bigint)",
                                    params: &params)
        return PGStatement("""
            WITH gone AS (
                DELETE FROM session_tokens WHERE user_id = $1::bigint AND token_hash IS DISTINCT FROM $2::bytea
                RETURNING token_hash),
            \(auditCTE)
            SELECT g.token_hash,
                CASE WHEN g.token_hash IS NOT NULL
                    THEN pg_notify('\(ChangeNotification.channel)', $3::text || encode(g.token_hash, 'hex')) END,
                a.id, a.time_ms
            FROM (SELECT 1) one LEFT JOIN gone g ON true LEFT JOIN audited a ON true
            """, params)
    }

    /// One row (taken, then `id, canonical, display, email, created_at, email_verified` when changed, then the
    /// announcement, then the entry's stamp). A new address is unverified; the mails are queued when it changed. Another account's email is checked in the same statement; one committed meanwhile by
    /// another daemon fails the UPDATE with 23505, and the entry with it. A change of address is announced
    /// (`email-changed`, after `announcing`) with the address it replaced, read in the statement's snapshot, so
    /// the other daemons' register forms holding either one hear of it.
    static func changeEmail(of account: AccountID, to email: String?, announcing prefix: String, now: PGValue,
                            audit: AuditWrite?, mail: [QueuedMail]) -> PGStatement {
        var params: [PGValue] = [.optional(email), .optional(email.map(UsernameKey.folded)), .int(account), .text(prefix)]
        let mailCTEs = Self.queuedMail(mail, source: MailSource(from: "FROM changed", account: "changed.id"), now: now,
                                       params: &params)
        let auditCTE = Self.audited(audit, time: .now(now), source: "FROM changed", params: &params)
        func hex(_ column: String) -> String { "encode(convert_to(coalesce(\(column), ''), 'UTF8'), 'hex')" }
        return PGStatement("""
            WITH target AS (
                SELECT EXISTS (SELECT 1 FROM users WHERE email_key = $2::text AND id <> $3::bigint) AS taken),
            previous AS (SELECT email FROM users WHERE id = $3::bigint),
            changed AS (
                UPDATE users SET email = $1::text, email_key = $2::text,
                    email_verified = users.email_verified AND users.email_key IS NOT DISTINCT FROM $2::text
                FROM target
                WHERE users.id = $3::bigint AND NOT target.taken
                RETURNING users.id, users.canonical, users.display, users.email, users.created_at, users.email_verified),
            \(mailCTEs)
            \(auditCTE)
            SELECT target.taken, changed.*,
                CASE WHEN changed.id IS NOT NULL AND changed.email IS DISTINCT FROM previous.email
                    THEN pg_notify('\(ChangeNotification.channel)', $4::text || ' ' || \(hex("changed.canonical")) || ' '
                                   || \(hex("changed.email")) || ' ' || \(hex("previous.email"))) END,
                a.id, a.time_ms
            FROM target LEFT JOIN changed ON true LEFT JOIN previous ON true LEFT JOIN audited a ON true
            """, params)
    }

    /// Deletes the account, if it still has `email` (the deletion's notification names it), with the failed
    /// log-ins of `failureKeys` and its queued code mails; its contacts, tokens, codes, mailed codes, TOTP, passkeys
    /// and user handle go by the foreign keys, and its notices, `mail` among them, stay. Rows (id, a token
    /// hash or NULL, then the entry's stamp), none when nothing was deleted. The tokens are read in the
    /// statement's snapshot, before the cascade, and each is announced, as is the deletion.
    static func deleteAccount(_ account: AccountID, email: String?, failureKeys: [String], notification: String,
                              announcingTokens prefix: String, now: PGValue, audit: AuditWrite?,
                              mail: [QueuedMail]) -> PGStatement {
        var params: [PGValue] = [.int(account), .optional(email), .text(notification),
                                 .text(PGArrayLiteral.texts(failureKeys)), .text(prefix)]
        let dropped = Self.droppedCodeMails(of: "$1::bigint", when: "EXISTS (SELECT 1 FROM victim)", params: &params)
        let mailCTEs = Self.queuedMail(mail.map(\.withoutCode), source: MailSource(from: "FROM victim", account: "victim.id"),
                                       now: now, countingCodeMails: false, params: &params)
        let auditCTE = Self.audited(audit, time: .now(now), source: "FROM victim", params: &params)
        return PGStatement("""
            WITH victim AS (
                DELETE FROM users WHERE id = $1::bigint AND email IS NOT DISTINCT FROM $2::text
                RETURNING id, pg_notify('\(ChangeNotification.channel)', $3::text)),
            tokens AS (SELECT t.token_hash FROM session_tokens t JOIN victim v ON t.user_id = v.id),
            failures AS (
                DELETE FROM login_failures WHERE key = ANY($4::text[]) AND EXISTS (SELECT 1 FROM victim)),
            \(dropped)
            \(mailCTEs)
            \(auditCTE)
            SELECT v.id, t.token_hash,
                CASE WHEN t.token_hash IS NOT NULL
                    THEN pg_notify('\(ChangeNotification.channel)', $5::text || encode(t.token_hash, 'hex')) END,
                a.id, a.time_ms
            FROM victim v LEFT JOIN tokens t ON true LEFT JOIN audited a ON true
            """, params)
    }

    /// Rows (hash, created_at, last_used_at, client) of the account's live tokens, oldest first: alive while
    /// `now - last_used_at < idleLimitMs`, as a resume counts it.
    static func sessions(of account: AccountID, idleLimitMs: Int64, now: PGValue) -> PGStatement {
        PGStatement("""
            SELECT token_hash, created_at, last_used_at, client FROM session_tokens
            WHERE user_id = $2::bigint AND last_used_at > \(Self.now(1)) - $3::bigint ORDER BY created_at, token_hash
            """, [now, .int(account), span(idleLimitMs)])
    }

    /// Every code of the account replaced, in one transaction; the entry (when the account is there) last.
    static func replaceRecoveryCodes(of account: AccountID, hashes: [[UInt8]], now: PGValue,
                                     audit: AuditWrite?) -> [PGStatement] {
        var statements = [PGStatement("DELETE FROM recovery_codes WHERE user_id = $1::bigint", [.int(account)])]
        if !hashes.isEmpty {
            let tuples = hashes.indices.map { "($1::bigint, $\($0 + 2)::bytea)" }.joined(separator: ", ")
            statements.append(PGStatement("INSERT INTO recovery_codes(user_id, code_hash) VALUES \(tuples)",
                                          [.int(account)] + hashes.map(PGValue.bytes)))
        }
        if let audit { statements.append(insertAudit(audit, ifAccountExists: account, now: now)) }
        return statements
    }

    /// The entry of a write that is a transaction of several statements, when its account is (still) there.
    static func insertAudit(_ audit: AuditWrite, ifAccountExists account: AccountID, now: PGValue) -> PGStatement {
        var params: [PGValue] = [.int(account)]
        let sql = insertAudit(audit, time: .now(now), source: "WHERE EXISTS (SELECT 1 FROM users WHERE id = $1::bigint)",
                              params: &params)
        return PGStatement(sql, params)
    }

    /// One row when the account has an unused recovery code with this hash, none otherwise.
    static func holdsRecoveryCode(of account: AccountID, codeHash: [UInt8]) -> PGStatement {
        PGStatement("SELECT 1 FROM recovery_codes WHERE user_id = $1::bigint AND code_hash = $2::bytea",
                    [.int(account), .bytes(codeHash)])
    }

    /// Uses the code up, sets the password hash and deletes every token, each announced: rows (a token hash or
    /// NULL, then the entry's stamp), none when the account had no such code (then nothing changed).

    static func redeemRecoveryCode(of account: AccountID, codeHash: [UInt8], newPasswordHash: String,
                                   announcingTokens prefix: String, now: PGValue, audit: AuditWrite?,
                                   mail: [QueuedMail]) -> PGStatement {
        var params: [PGValue] = [.int(account), .bytes(codeHash), .text(newPasswordHash), .text(prefix)]
        let mailCTEs = Self.queuedMail(mail, source: MailSource(from: "FROM used", account: "used.user_id"), now: now,
                                       params: &params)
        let auditCTE = Self.audited(audit, time: .now(now), source: "FROM used", params: &params)
        return PGStatement("""
            WITH used AS (
                DELETE FROM recovery_codes WHERE user_id = $1::bigint AND code_hash = $2::bytea RETURNING user_id),
            changed AS (
                UPDATE users SET password_hash = $3::text FROM used WHERE users.id = used.user_id RETURNING users.id),
            gone AS (
                DELETE FROM session_tokens t USING used WHERE t.user_id = used.user_id RETURNING t.token_hash),
            \(mailCTEs)
            \(auditCTE)
            SELECT g.token_hash,
                CASE WHEN g.token_hash IS NOT NULL
                    THEN pg_notify('\(ChangeNotification.channel)', $4::text || encode(g.token_hash, 'hex')) END,
                a.id, a.time_ms
            FROM used LEFT JOIN gone g ON true LEFT JOIN audited a ON true
            """, params)
    }

    static func storePendingTOTP(of account: AccountID, sealed: [UInt8]) -> PGStatement {
        PGStatement("""
            INSERT INTO totp(user_id, pending) VALUES ($1::bigint, $2::bytea)
            ON CONFLICT (user_id) DO UPDATE SET pending = EXCLUDED.pending
            """, [.int(account), .bytes(sealed)])
    }

    /// One row (the entry's stamp) when a secret was pending; none otherwise.
    static func confirmTOTP(of account: AccountID, step: Int64, now: PGValue, audit: AuditWrite?) -> PGStatement {
        var params: [PGValue] = [.int(account), .int(step)]
        let auditCTE = Self.audited(audit, time: .now(now), source: "FROM confirmed", params: &params)
        return PGStatement("""
            WITH confirmed AS (
                UPDATE totp SET sealed = pending, pending = NULL, last_step = $2::bigint
                WHERE user_id = $1::bigint AND pending IS NOT NULL
                RETURNING user_id),
            \(auditCTE)
            SELECT a.id, a.time_ms FROM confirmed LEFT JOIN audited a ON true
            """, params)
    }

    /// One statement, so of two log-ins with one code exactly one changes the row (the second waits for the
    /// first's row lock, then finds the step used).
    static func acceptTOTPStep(of account: AccountID, step: Int64) -> PGStatement {
        PGStatement("""
            UPDATE totp SET last_step = $2::bigint
            WHERE user_id = $1::bigint AND sealed IS NOT NULL AND (last_step IS NULL OR last_step < $2::bigint)
            """, [.int(account), .int(step)])
    }

    /// One row: the entry's stamp (NULL when the account is gone, and then no entry).
    static func removeTOTP(of account: AccountID, now: PGValue, audit: AuditWrite?) -> PGStatement {
        var params: [PGValue] = [.int(account)]
        let auditCTE = Self.audited(audit, time: .now(now), source: "WHERE EXISTS (SELECT 1 FROM users WHERE id = $1::bigint)",
                                    params: &params)
        return PGStatement("""
            WITH gone AS (DELETE FROM totp WHERE user_id = $1::bigint),
            \(auditCTE)
            SELECT a.id, a.time_ms FROM (SELECT 1) one LEFT JOIN audited a ON true
            """, params)
    }
}
