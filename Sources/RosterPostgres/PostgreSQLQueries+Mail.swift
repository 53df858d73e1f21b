import RosterCore
import RosterStorage

// The outbox and the mailed codes (protocol.md §Storage). A write's mails are queued by the write's own statement,
// in CTEs that read the row the change made (`MailSource`), so they commit exactly when the change does. The cap
// counts what the statement's snapshot holds: a write that queues mail locks its account's row first
// (`lockAccountForMail`, in its transaction), so the next statement's snapshot holds every mail queued before,
// and two daemons queueing for one account count one after the other. A code is tried by one UPDATE that
// compares its keyed hash in SQL and costs a try under the row's lock, so wrong tries on every daemon count.
// The sender claims with `FOR UPDATE SKIP LOCKED`: of two daemons claiming at once, each skips the rows the other
// holds, and a row claimed and committed meanwhile is re-checked and found claimed.
extension PostgreSQLQueries {
    /// Where a write's mails are filed: `from` (a FROM clause, with its WHERE) yields one row exactly when the
    /// write happened, in which `account` is the account's id.
    struct MailSource {
        let from: String
        let account: String

        /// The row of the account, when it is there.
        static func account(_ parameter: String) -> MailSource {
            MailSource(from: "FROM users mail_account WHERE mail_account.id = \(parameter)", account: "mail_account.id")
        }
    }

    /// The kinds that carry a code, as an array literal.
    private static var codeKinds: PGValue { .text(PGArrayLiteral.texts(MailKindName.carryingCode.map(\.rawValue))) }

    /// Locks the account's row until the transaction ends, as every write that queues mail for it does first; NO
    /// KEY UPDATE, so that contact writes (whose foreign key takes KEY SHARE) do not wait for it.
    static func lockAccountForMail(_ account: AccountID) -> PGStatement {
        PGStatement("SELECT 1 FROM users WHERE id = $1::bigint FOR NO KEY UPDATE", [.int(account)])
    }

    /// The CTEs (each followed by a comma, to go before `audited`) that queue as many of `mails` as the account's
    /// cap admits for the one row `source` yields, in their order (one INSERT, so their ids are), each code
    /// replacing the account's of its purpose; "" for no mail. Not counted against the cap: the code mails a
    /// deletion drops (`countingCodeMails` false). Of two codes of one purpose in one write, the later is stored, as
    /// the other backends' turn by turn would leave it.
    static func queuedMail(_ mails: [QueuedMail], source: MailSource, now: PGValue, countingCodeMails: Bool = true,
                           params: inout [PGValue]) -> String {
        guard !mails.isEmpty else { return "" }
        func bind(_ value: PGValue, _ type: String) -> String {
            params.append(value)
            return "$\(params.count)::\(type)"
        }
        let uncounted = countingCodeMails ? "" : " AND NOT (kind = ANY(\(bind(codeKinds, "text[]"))))"
        params.append(now)
        let clock = Self.now(params.count)
        let rows = mails.enumerated().map { index, mail in
            "(\(index), \(bind(.text(mail.kind.rawValue), "text")), \(bind(.text(mail.recipient), "text")), "
                + "\(bind(.bytes(mail.sealedMessage), "bytea")))"
        }
        var ctes = ["""
            mail_room AS (
                SELECT src.account, \(MailLimits.queuedPerAccount) - (SELECT count(*) FROM mail_outbox
                        WHERE account_id = src.account AND status = 'queued'\(uncounted)) AS room,
                    \(clock) AS ms
                FROM (SELECT \(source.account) AS account \(source.from)) src)
            """, """
            mail_queued AS (
                INSERT INTO mail_outbox(account_id, kind, recipient, message, status, attempts, next_attempt_at, queued_at)
                SELECT r.account, m.kind, m.recipient, m.message, 'queued', 0, r.ms, r.ms
                FROM mail_room r CROSS JOIN (VALUES \(rows.joined(separator: ", "))) AS m(position, kind, recipient, message)
                WHERE m.position < r.room ORDER BY m.position)
            """]
        let lastCode = Dictionary(mails.enumerated().compactMap { index, mail in mail.code.map { ($0.purpose, index) } },
                                  uniquingKeysWith: { max($0, $1) })
        let codes = mails.enumerated().compactMap { index, mail -> String? in
            guard let code = mail.code, lastCode[code.purpose] == index else { return nil }
            return "(\(index), \(bind(.text(code.purpose.rawValue), "text")), \(bind(.bytes(code.codeHash), "bytea")), "
                + "\(bind(.int(code.expiresAtMs), "bigint")), \(bind(.text(code.email), "text")))"
        }
        if !codes.isEmpty {
            ctes.append("""
                mail_coded AS (
                    INSERT INTO mail_codes(account_id, purpose, code_hash, expires_at, tries_left, email, created_at)
                    SELECT r.account, c.purpose, c.code_hash, c.expires_at, \(MailLimits.triesPerCode), c.email, r.ms
                    FROM mail_room r
                    CROSS JOIN (VALUES \(codes.joined(separator: ", "))) AS c(position, purpose, code_hash, expires_at, email)
                    WHERE c.position < r.room
                    ON CONFLICT (account_id, purpose) DO UPDATE SET code_hash = EXCLUDED.code_hash,
                        expires_at = EXCLUDED.expires_at, tries_left = EXCLUDED.tries_left, email = EXCLUDED.email,
                        created_at = EXCLUDED.created_at)
                """)
        }
        return ctes.joined(separator: ",\n") + ","
    }

    /// A write's mails in a statement of their own, inside the write's transaction: queued when the account is
    /// (still) there.
    static func queueMail(_ mails: [QueuedMail], ifAccountExists account: AccountID, now: PGValue) -> PGStatement {
        var params: [PGValue] = [.int(account)]
        let ctes = queuedMail(mails, source: .account("$1::bigint"), now: now, params: &params)
        return PGStatement("WITH \(ctes)\nqueued_mail AS (SELECT 1)\nSELECT count(*) FROM mail_room", params)
    }

    /// Where the mails of a write were filed, for `auditQueuedMail`: an account known by id, or the one a
    /// registration in this transaction made, by its name's key.
    enum MailAccount {
        case id(AccountID)
        case registered(username: String)
    }

    /// The last statement of a write that queued mail and has an entry: a `mail_queued` entry (from `entries`,
    /// one per kind queued) for each mail this transaction put in the account's outbox, oldest first, each
    /// announced. It reads the account's queued rows (at most the cap, through `mail_outbox_account`) whose
    /// `xmin` is this transaction's: the write's own, whatever its cap admitted, and never another's, whose
    /// rows carry another transaction's id. Rows (id, time_ms, reason), oldest first.
    static func auditQueuedMail(_ entries: [AuditWrite], in account: MailAccount, now: PGValue) -> PGStatement {
        var params: [PGValue] = [now]
        func bind(_ value: PGValue, _ type: String) -> String {
            params.append(value)
            return "$\(params.count)::\(type)"
        }
        let filed = switch account {
        case .id(let id): bind(.int(id), "bigint")
        case .registered(let username):
            "(SELECT id FROM users WHERE username_key = \(bind(.text(UsernameKey.folded(username)), "text")))"
        }
        let rows = entries.map { write in
            "(" + zip(auditValues(write), auditValueTypes).map { bind($0, $1) }.joined(separator: ", ") + ")"
        }
        guard !rows.isEmpty else { return PGStatement("SELECT NULL::bigint, NULL::bigint, NULL::text WHERE false", []) }
        return PGStatement("""
            WITH clock AS (SELECT \(Self.now(1)) AS ms),
            fresh AS (
                SELECT id, kind FROM mail_outbox
                WHERE account_id = \(filed) AND status = 'queued' AND xmin = pg_current_xact_id()::xid),
            entry(event, username, peer_uid, peer_pid, client, outcome, kind, suppressed, head, tail, remote, method) AS (
                VALUES \(rows.joined(separator: ", "))),
            inserted AS (
                INSERT INTO audit_log(event, username, peer_uid, peer_pid, client, outcome, reason, suppressed, remote, method,
                    time_ms)
                SELECT e.event, e.username, e.peer_uid, e.peer_pid, e.client, e.outcome, f.kind, e.suppressed, e.remote,
                    e.method, clock.ms
                FROM fresh f JOIN entry e ON e.kind = f.kind CROSS JOIN clock ORDER BY f.id
                RETURNING id, time_ms, reason)
            SELECT i.id, i.time_ms, i.reason,
                pg_notify('\(ChangeNotification.channel)', e.head || i.id || ' ' || i.time_ms || e.tail)
            FROM inserted i JOIN entry e ON e.kind = i.reason ORDER BY i.id
            """, params)
    }

    /// The CTE of a deletion that drops the account's queued code mails.
    static func droppedCodeMails(of account: String, when condition: String, params: inout [PGValue]) -> String {
        params.append(codeKinds)
        return """
            dropped_mail AS (
                DELETE FROM mail_outbox WHERE account_id = \(account) AND status = 'queued'
                    AND kind = ANY($\(params.count)::text[]) AND \(condition)),
            """
    }

    // MARK: Codes

    /// The account's live code of `purpose` tried (`$1` the account, `$2` the hash, `$3` now): the CTE `tried`
    /// (matched, tries_left, email, account_id), one row when there was a live code to try. `acct` (id) is the
    /// account, when it is there.
    static func triedCode(purpose: MailCodePurpose, params: inout [PGValue]) -> String {
        params.append(.text(purpose.rawValue))
        return """
            acct AS (SELECT id, email_key FROM users WHERE id = $1::bigint),
            tried AS (
                UPDATE mail_codes c SET tries_left = CASE WHEN c.code_hash = $2::bytea THEN 0 ELSE c.tries_left - 1 END
                FROM acct
                WHERE c.account_id = acct.id AND c.purpose = $\(params.count)::text AND c.tries_left > 0
                    AND c.expires_at > $3::bigint AND \(PostgreSQLSchema.folded("c.email")) = acct.email_key
                RETURNING c.code_hash = $2::bytea AS matched, c.tries_left, c.email, c.account_id),
            """
    }

    /// One row: whether the account is there, then (matched, tries_left, email) when a live code was tried, then
    /// the entry's stamp. A right code marks the email verified.
    static func verifyEmail(of account: AccountID, codeHash: [UInt8], nowMs: Int64, now: PGValue,
                            audit: AuditWrite?) -> PGStatement {
        var params: [PGValue] = [.int(account), .bytes(codeHash), .int(nowMs)]
        let tried = triedCode(purpose: .verifyEmail, params: &params)
        let auditCTE = Self.audited(audit, time: .now(now), source: "FROM tried WHERE tried.matched", params: &params)
        return PGStatement("""
            WITH \(tried)
            verified AS (
                UPDATE users SET email_verified = true FROM tried WHERE users.id = tried.account_id AND tried.matched
                RETURNING users.id),
            \(auditCTE)
            SELECT EXISTS (SELECT 1 FROM acct), t.matched, t.tries_left, t.email, a.id, a.time_ms
            FROM (SELECT 1) one LEFT JOIN tried t ON true LEFT JOIN audited a ON true
            """, params)
    }

    /// Rows (matched, tries_left, a revoked token's hash or NULL, its announcement, then the entry's stamp), one at
    /// least when a live code was tried, none when there was none. A right code sets the password hash, deletes
    /// every token (each announced) and queues `mails`.
    static func redeemMailedCode(of account: AccountID, codeHash: [UInt8], nowMs: Int64, newPasswordHash: String,
                                 announcingTokens prefix: String, now: PGValue, audit: AuditWrite?,
                                 mail: [QueuedMail]) -> PGStatement {
        var params: [PGValue] = [.int(account), .bytes(codeHash), .int(nowMs), .text(newPasswordHash), .text(prefix)]
        let tried = triedCode(purpose: .recover, params: &params)
        let mailCTEs = queuedMail(mail, source: MailSource(from: "FROM tried WHERE tried.matched", account: "tried.account_id"),
                                  now: now, params: &params)
        let auditCTE = Self.audited(audit, time: .now(now), source: "FROM tried WHERE tried.matched", params: &params)
        return PGStatement("""
            WITH \(tried)
            changed AS (
                UPDATE users SET password_hash = $4::text FROM tried WHERE users.id = tried.account_id AND tried.matched
                RETURNING users.id),
            gone AS (
                DELETE FROM session_tokens s USING tried WHERE s.user_id = tried.account_id AND tried.matched
                RETURNING s.token_hash),
            \(mailCTEs)
            \(auditCTE)
            SELECT t.matched, t.tries_left, g.token_hash,
                CASE WHEN g.token_hash IS NOT NULL
                    THEN pg_notify('\(ChangeNotification.channel)', $5::text || encode(g.token_hash, 'hex')) END,
                a.id, a.time_ms
            FROM tried t LEFT JOIN gone g ON true LEFT JOIN audited a ON true
            """, params)
    }

    /// One row: the verdict (`gone`, `too_soon`, `full`, `queued`), the last code's creation time (or NULL), the
    /// statement's now, the new row's id when queued, then the entry's stamp. Sent after `lockAccountForMail`, in
    /// its transaction, so the interval and the cap hold across daemons.
    static func queueCodeMail(_ mail: QueuedMail, code: NewMailCode, of account: AccountID, minimumIntervalMs: Int64,
                              now: PGValue, audit: AuditWrite?) -> PGStatement {
        var params: [PGValue] = [now, .int(account), .text(code.purpose.rawValue), span(minimumIntervalMs),
                                 .text(mail.kind.rawValue), .text(mail.recipient), .bytes(mail.sealedMessage),
                                 .bytes(code.codeHash), .int(code.expiresAtMs), .text(code.email)]
        let auditCTE = Self.audited(audit, time: .column("verdict.ms"), source: "FROM verdict WHERE verdict.outcome = 'queued'",
                                    params: &params)
        return PGStatement("""
            WITH clock AS (SELECT \(Self.now(1)) AS ms),
            last AS (SELECT created_at FROM mail_codes WHERE account_id = $2::bigint AND purpose = $3::text),
            room AS (
                SELECT \(MailLimits.queuedPerAccount) - count(*) AS room FROM mail_outbox
                WHERE account_id = $2::bigint AND status = 'queued'),
            verdict AS (
                SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM users WHERE id = $2::bigint) THEN 'gone'
                            WHEN last.created_at > clock.ms - $4::bigint THEN 'too_soon'
                            WHEN room.room <= 0 THEN 'full'
                            ELSE 'queued' END AS outcome,
                    last.created_at, clock.ms
                FROM clock CROSS JOIN room LEFT JOIN last ON true),
            queued AS (
                INSERT INTO mail_outbox(account_id, kind, recipient, message, status, attempts, next_attempt_at, queued_at)
                SELECT $2::bigint, $5::text, $6::text, $7::bytea, 'queued', 0, verdict.ms, verdict.ms
                FROM verdict WHERE verdict.outcome = 'queued'
                RETURNING id),
            coded AS (
                INSERT INTO mail_codes(account_id, purpose, code_hash, expires_at, tries_left, email, created_at)
                SELECT $2::bigint, $3::text, $8::bytea, $9::bigint, \(MailLimits.triesPerCode), $10::text, verdict.ms
                FROM verdict WHERE verdict.outcome = 'queued'
                ON CONFLICT (account_id, purpose) DO UPDATE SET code_hash = EXCLUDED.code_hash,
                    expires_at = EXCLUDED.expires_at, tries_left = EXCLUDED.tries_left, email = EXCLUDED.email,
                    created_at = EXCLUDED.created_at),
            \(auditCTE)
            SELECT v.outcome, v.created_at, v.ms, q.id, a.id, a.time_ms
            FROM verdict v LEFT JOIN queued q ON true LEFT JOIN audited a ON true
            """, params)
    }

    // MARK: The sender

    /// Rows (id, account_id, kind, recipient, message, attempts, queued_at, next_attempt_at) of the mails claimed:
    /// due, unclaimed or claimed by a claim that expired, of a kind this rosterd knows, oldest due first.
    static func claimDueMail(claimant: String, nowMs: Int64, leaseMs: Int64, limit: Int) -> PGStatement {
        let (expiry, overflow) = nowMs.addingReportingOverflow(max(0, leaseMs))
        return PGStatement("""
            WITH due AS (
                SELECT id FROM mail_outbox
                WHERE status = 'queued' AND next_attempt_at <= $1::bigint
                    AND (claim_expires_at IS NULL OR claim_expires_at <= $1::bigint) AND kind = ANY($4::text[])
                ORDER BY next_attempt_at, id LIMIT $3::bigint
                FOR UPDATE SKIP LOCKED)
            UPDATE mail_outbox m SET claimant = $2::text, claim_expires_at = $5::bigint FROM due WHERE m.id = due.id
            RETURNING m.id, m.account_id, m.kind, m.recipient, m.message, m.attempts, m.queued_at, m.next_attempt_at
            """, [.int(nowMs), .text(claimant), .int(Int64(max(0, limit))),
                  .text(PGArrayLiteral.texts(MailKindName.allCases.map(\.rawValue))), .int(overflow ? .max : expiry)])
    }

    /// One row (the id, then the entry's stamp) when `claimant` held the queued row; none otherwise.
    static func finishMail(_ id: MailID, claimant: String, outcome: MailHandOffResult, now: PGValue,
                           audit: AuditWrite?) -> PGStatement {
        let (status, next, sent, error): (MailStatus, Int64?, Int64?, String?) = switch outcome {
        case .sent(let atMs): (.sent, nil, atMs, nil)
        case .retry(let nextAttemptAtMs, let error): (.queued, nextAttemptAtMs, nil, error)
        case .failed(let error): (.failed, nil, nil, error)
        }
        var params: [PGValue] = [.text(status.rawValue), next.map(PGValue.int) ?? .null, sent.map(PGValue.int) ?? .null,
                                 .optional(error), .int(id), .text(claimant)]
        let auditCTE = Self.audited(audit, time: .now(now), source: "FROM finished", params: &params)
        return PGStatement("""
            WITH finished AS (
                UPDATE mail_outbox SET status = $1::text, next_attempt_at = $2::bigint, sent_at = $3::bigint,
                    last_error = COALESCE($4::text, last_error), attempts = attempts + 1, claimant = NULL,
                    claim_expires_at = NULL
                WHERE id = $5::bigint AND claimant = $6::text AND status = 'queued'
                RETURNING id),
            \(auditCTE)
            SELECT f.id, a.id, a.time_ms FROM finished f LEFT JOIN audited a ON true
            """, params)
    }

    // MARK: Reads

    /// Rows (id, account_id, kind, recipient, status, attempts, last_error, queued_at, next_attempt_at, sent_at),
    /// newest first.
    static func listMail(status: MailStatus?, limit: Int) -> PGStatement {
        PGStatement("""
            SELECT id, account_id, kind, recipient, status, attempts, last_error, queued_at, next_attempt_at, sent_at
            FROM mail_outbox WHERE $1::text IS NULL OR status = $1::text ORDER BY id DESC LIMIT $2::bigint
            """, [.optional(status?.rawValue), .int(Int64(max(0, limit)))])
    }

    static let mailCounts = PGStatement("""
        SELECT count(*) FILTER (WHERE status = 'queued'), count(*) FILTER (WHERE status = 'failed'),
            count(*) FILTER (WHERE status = 'sent')
        FROM mail_outbox
        """)
}
