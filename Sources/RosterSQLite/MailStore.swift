import RosterCore
import RosterStorage

/// The outbox and the mailed codes over `mail_outbox`, `mail_codes` and `users.email_verified`. Each write is one
/// transaction of its own, or joins the write that causes it (`Database.enclosingTransaction`), so a mail is
/// committed exactly with its cause. A code is tried by one UPDATE that compares its keyed hash in SQL.
public struct MailStore {
    /// The connection this store uses; see `Database`: it belongs to one thread.
    public let database: Database

    /// A store over `database`, whose schema must already be migrated.
    public init(database: Database) {
        self.database = database
    }

    /// The kinds that carry a code, as a SQL list of literals (the raw values are fixed identifiers).
    private static let codeKinds = MailKindName.carryingCode.map { "'\($0.rawValue)'" }.joined(separator: ", ")
    /// The kinds this rosterd can hand off: a row of any other (a newer rosterd's) is never claimed here.
    private static let knownKinds = MailKindName.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")

    // MARK: Queueing

    /// Queues as many of `mails` as the account's cap admits, each with its code, stamped `now`; the ids queued.
    @discardableResult
    public func queue(_ mails: [QueuedMail], for account: Int64, now: Int64) throws(StoreError) -> [MailID] {
        guard !mails.isEmpty else { return [] }
        do {
            return try database.transaction { () throws(StoreError) -> [MailID] in
                var ids: [MailID] = []
                for mail in MailLimits.admitted(mails, queued: try queuedCount(of: account)) {
                    ids.append(try insert(mail, for: account, now: now))
                }
                return ids
            }
        } catch {
            throw error.relabelled("queue mail")
        }
    }

    /// `MailStorage.queueCodeMail`: the interval, then the cap, then the mail and its code, in one transaction.
    public func queueCode(_ mail: QueuedMail, for account: Int64, minimumIntervalMs: Int64,
                          now: Int64) throws(StoreError) -> CodeMailQueueing {
        guard let code = mail.code else { throw .unreadableValue(operation: "queue a code mail without its code") }
        do {
            return try database.transaction { () throws(StoreError) -> CodeMailQueueing in
                guard try UserStore(database: database).user(id: account) != nil else { return .gone }
                let last = try database.cached("SELECT created_at FROM mail_codes WHERE account_id = ? AND purpose = ?")
                defer { last.reset() }
                try last.bind(account, at: 1)
                try last.bind(code.purpose.rawValue, at: 2)
                if try last.step(), let wait = MailLimits.tooSoon(createdAtMs: last.int64(at: 0),
                                                                  minimumIntervalMs: minimumIntervalMs, nowMs: now) {
                    return .tooSoon(retryAfterMs: wait)
                }
                last.reset()
                guard try queuedCount(of: account) < MailLimits.queuedPerAccount else { return .queueFull }
                return .queued(try insert(mail, for: account, now: now))
            }
        } catch {
            throw error.relabelled("queue code mail")
        }
    }

    /// Inside a deletion: the account's queued mails that carry a code (their codes go with the account).
    func dropCodeMails(of account: Int64) throws(StoreError) {
        let drop = try database.cached("""
            DELETE FROM mail_outbox WHERE account_id = ? AND status = 'queued' AND kind IN (\(Self.codeKinds))
            """)
        try drop.bind(account, at: 1)
        try drop.run()
    }

    private func queuedCount(of account: Int64) throws(StoreError) -> Int {
        let count = try database.cached("SELECT count(*) FROM mail_outbox WHERE account_id = ? AND status = 'queued'")
        defer { count.reset() }
        try count.bind(account, at: 1)
        return try count.step() ? count.int(at: 0) : 0
    }

    /// Inside a transaction: one outbox row, due at once, and its code replacing the account's of that purpose.
    private func insert(_ mail: QueuedMail, for account: Int64, now: Int64) throws(StoreError) -> MailID {
        let insert = try database.cached("""
            INSERT INTO mail_outbox(account_id, kind, recipient, message, status, attempts, next_attempt_at, queued_at)
            VALUES (?, ?, ?, ?, 'queued', 0, ?, ?)
            """)
        try insert.bind([.integer(account), .text(mail.kind.rawValue), .text(mail.recipient), .blob(mail.sealedMessage),
                         .integer(now), .integer(now)])
        try insert.run()
        let id = database.lastInsertRowID
        if let code = mail.code {
            let replace = try database.cached("""
                INSERT INTO mail_codes(account_id, purpose, code_hash, expires_at, tries_left, email, created_at)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                ON CONFLICT(account_id, purpose) DO UPDATE SET code_hash = ?3, expires_at = ?4, tries_left = ?5,
                    email = ?6, created_at = ?7
                """)
            try replace.bind([.integer(account), .text(code.purpose.rawValue), .blob(code.codeHash),
                              .integer(code.expiresAtMs), .integer(Int64(MailLimits.triesPerCode)), .text(code.email),
                              .integer(now)])
            try replace.run()
        }
        return id
    }

    // MARK: Codes

    /// Inside a transaction: one try of the account's live code of `purpose` (unused, unexpired at `nowMs`, with
    /// tries left, mailed to the email the account has now), in one UPDATE: a right one is used up, a wrong one
    /// costs a try. `.noLiveCode` when there is none to try.
    func tryCode(_ codeHash: [UInt8], of account: Int64, purpose: MailCodePurpose,
                 nowMs: Int64) throws(StoreError) -> MailCodeTry {
        let attempt = try database.cached("""
            UPDATE mail_codes SET tries_left = CASE WHEN code_hash = ?1 THEN 0 ELSE tries_left - 1 END
            WHERE account_id = ?2 AND purpose = ?3 AND tries_left > 0 AND expires_at > ?4
                AND email = (SELECT email FROM users WHERE id = ?2)
            RETURNING code_hash = ?1, tries_left, email
            """)
        defer { attempt.reset() }
        try attempt.bind([.blob(codeHash), .integer(account), .text(purpose.rawValue), .integer(nowMs)])
        guard try attempt.step() else { return .noLiveCode }
        if attempt.int64(at: 0) != 0 { return .right(email: attempt.string(at: 2) ?? "") }
        return .wrong(triesLeft: attempt.int(at: 1))
    }

    /// `MailStorage.verifyEmail` in one transaction: the try, and on a right code the email marked verified.
    public func verifyEmail(of account: Int64, codeHash: [UInt8], nowMs: Int64) throws(StoreError) -> MailCodeCheck {
        do {
            return try database.transaction { () throws(StoreError) -> MailCodeCheck in
                guard try UserStore(database: database).user(id: account) != nil else { return .gone }
                switch try tryCode(codeHash, of: account, purpose: .verifyEmail, nowMs: nowMs) {
                case .noLiveCode: return .noLiveCode
                case .wrong(let left): return .wrong(triesLeft: left)
                case .right(let email):
                    let verify = try database.cached("UPDATE users SET email_verified = 1 WHERE id = ?")
                    try verify.bind(account, at: 1)
                    try verify.run()
                    return .verified(email: email)
                }
            }
        } catch {
            throw error.relabelled("verify email")
        }
    }

    // MARK: The sender

    /// Claims up to `limit` due rows not held by a live claim, oldest due first, in one UPDATE.
    public func claim(claimant: String, nowMs: Int64, leaseMs: Int64, limit: Int) throws(StoreError) -> [ClaimedMail] {
        let claim = try database.cached("""
            UPDATE mail_outbox SET claimant = ?1, claim_expires_at = ?2
            WHERE id IN (
                SELECT id FROM mail_outbox
                WHERE status = 'queued' AND next_attempt_at <= ?3 AND (claim_expires_at IS NULL OR claim_expires_at <= ?3)
                    AND kind IN (\(Self.knownKinds))
                ORDER BY next_attempt_at, id LIMIT ?4)
            RETURNING id, account_id, kind, recipient, message, attempts, queued_at, next_attempt_at
            """)
        defer { claim.reset() }
        do {
            return try database.transaction { () throws(StoreError) -> [ClaimedMail] in
                try claim.bind([.text(claimant), .integer(Saturating.add(nowMs, leaseMs)), .integer(nowMs),
                                .integer(Int64(max(0, limit)))])
                var claimed: [(due: Int64, mail: ClaimedMail)] = []
                while try claim.step() {
                    guard let kind = claim.string(at: 2).flatMap(MailKindName.init(rawValue:)) else {
                        throw .unreadableValue(operation: "read a claimed mail")
                    }
                    claimed.append((claim.int64(at: 7), ClaimedMail(
                        id: claim.int64(at: 0), account: claim.int64(at: 1), kind: kind,
                        recipient: claim.string(at: 3) ?? "", sealedMessage: claim.blob(at: 4),
                        attempts: claim.int(at: 5), queuedAtMs: claim.int64(at: 6))))
                }
                // RETURNING comes in no promised order.
                return claimed.sorted { ($0.due, $0.mail.id) < ($1.due, $1.mail.id) }.map(\.mail)
            }
        } catch {
            throw error.relabelled("claim due mail")
        }
    }

    /// Marks a hand-off's outcome on a queued row `claimant` still holds, releasing the claim; false otherwise.
    public func finish(_ id: MailID, claimant: String, outcome: MailHandOffResult) throws(StoreError) -> Bool {
        let (status, next, sent, error): (MailStatus, Int64?, Int64?, String?) = switch outcome {
        case .sent(let atMs): (.sent, nil, atMs, nil)
        case .retry(let nextAttemptAtMs, let error): (.queued, nextAttemptAtMs, nil, error)
        case .failed(let error): (.failed, nil, nil, error)
        }
        let finish = try database.cached("""
            UPDATE mail_outbox SET status = ?1, next_attempt_at = ?2, sent_at = ?3, last_error = coalesce(?4, last_error),
                attempts = attempts + 1, claimant = NULL, claim_expires_at = NULL
            WHERE id = ?5 AND claimant = ?6 AND status = 'queued'
            """)
        do {
            return try database.transaction { () throws(StoreError) -> Bool in
                try finish.bind([.text(status.rawValue), next.map(SQLValue.integer) ?? .null,
                                 sent.map(SQLValue.integer) ?? .null, error.map(SQLValue.text) ?? .null, .integer(id),
                                 .text(claimant)])
                try finish.run()
                return database.changes > 0
            }
        } catch {
            throw error.relabelled("finish mail")
        }
    }

    // MARK: Reads

    /// Rows newest first, of one status or all, without their messages.
    public func list(status: MailStatus?, limit: Int) throws(StoreError) -> [MailListing] {
        let list = try database.cached("""
            SELECT id, account_id, kind, recipient, status, attempts, last_error, queued_at, next_attempt_at, sent_at
            FROM mail_outbox WHERE ?1 IS NULL OR status = ?1 ORDER BY id DESC LIMIT ?2
            """)
        defer { list.reset() }
        do {
            try list.bind([status.map { SQLValue.text($0.rawValue) } ?? .null, .integer(Int64(max(0, limit)))])
            var rows: [MailListing] = []
            while try list.step() {
                guard let kind = list.string(at: 2).flatMap(MailKindName.init(rawValue:)),
                      let status = list.string(at: 4).flatMap(MailStatus.init(rawValue:)) else { continue }
                rows.append(MailListing(id: list.int64(at: 0), account: list.int64(at: 1), kind: kind,
                                        recipient: list.string(at: 3) ?? "", status: status, attempts: list.int(at: 5),
                                        lastError: list.string(at: 6), queuedAtMs: list.int64(at: 7),
                                        nextAttemptAtMs: list.isNull(at: 8) ? nil : list.int64(at: 8),
                                        sentAtMs: list.isNull(at: 9) ? nil : list.int64(at: 9)))
            }
            return rows
        } catch {
            throw error.relabelled("list mail")
        }
    }

    public func counts() throws(StoreError) -> MailCounts {
        let counts = try database.cached("""
            SELECT count(*) FILTER (WHERE status = 'queued'), count(*) FILTER (WHERE status = 'failed'),
                count(*) FILTER (WHERE status = 'sent')
            FROM mail_outbox
            """)
        defer { counts.reset() }
        do {
            guard try counts.step() else { return MailCounts(queued: 0, failed: 0, sent: 0) }
            return MailCounts(queued: counts.int(at: 0), failed: counts.int(at: 1), sent: counts.int(at: 2))
        } catch {
            throw error.relabelled("count mail")
        }
    }
}
