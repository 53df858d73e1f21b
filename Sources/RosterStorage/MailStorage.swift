import RosterCore

/// The outbox and the mailed codes (protocol.md §Storage). A mail is first a row, committed in the transaction of
/// the write that causes it (the writes of `AccountStorage`, `AccountLifeStorage` take `mail:`), then claimed by
/// one daemon, handed to the host's sendmail, and marked. Nothing queued is lost across `kill -9`: a claim whose
/// daemon died expires and the row is claimed again, so a mail may go twice but never zero times.
///
/// The writes that take `mail:` queue each mail while the account has fewer than `MailLimits.queuedPerAccount`
/// queued and skip the rest (`MailLimits.admitted`): a password change or a deletion is never refused for its
/// notice. They queue only when the write changed something (the rule its audit entry follows), file every mail
/// under the write's account (a registration's under the account it creates, whatever `QueuedMail.account`
/// says), and store a skipped mail's code no more than the mail. Their audit entry is the write's own: the outbox
/// (`listMail`) is where each queued mail is seen, and `mail_queued` is the entry a caller gives `queueCodeMail`.
///
/// A queued message holds its code in the clear (the reader must see it), so the outbox stores it only sealed
/// with the daemon's key; the code itself is stored as a keyed hash, like the recovery codes, and compared only
/// by that hash. Each account has at most one code per purpose: a new one replaces it, and a used, expired or
/// dead one stays until then (its time keeps `.tooSoon` honest).
///
/// Times: what a call is given (`nowMs`, a claim's lease, a hand-off's times) it uses as given, so that the
/// sender's clock decides what is due; what a call is not given (a row's `queued`, a code's `created`) is the
/// backend's clock, the database's with PostgreSQL.
public protocol MailStorage {
    /// Queues a mail that carries a code (`mail.code` set), replacing the account's unused code of that purpose,
    /// in one transaction. Refuses, changing nothing, when the account's last code of that purpose was made less
    /// than `minimumIntervalMs` ago (`.tooSoon`, across every daemon on the database) or the account already has
    /// `MailLimits.queuedPerAccount` mails queued (`.queueFull`). Answers `.gone` when the account is not there.
    /// `audit` (the caller's `mail_queued`) commits only with `.queued`. On a shared database the account's row is
    /// locked first, so the interval and the cap hold across daemons asking at the same instant.
    func queueCodeMail(of account: AccountID, _ mail: QueuedMail, minimumIntervalMs: Int64, audit: AuditRecord?,
                       completion: @escaping StorageCompletion<CodeMailQueueing>)

    /// Checks a mailed code of `purpose` against the account's live one (unused, not expired at `nowMs`, tries
    /// left) and, for `.verifyEmail`, marks the account's email verified when it is still the address the code
    /// went to; a right code is used up. A wrong one uses up a try, atomically, so five wrong tries across every
    /// daemon kill it. Recovery codes are redeemed by `redeemMailedCode`, not here. `audit` (`email_verified`)
    /// commits only with `.verified`.
    func verifyEmail(of account: AccountID, codeHash: [UInt8], nowMs: Int64, audit: AuditRecord?,
                     completion: @escaping StorageCompletion<MailCodeCheck>)

    /// Uses up the account's live recovery code with this hash, sets the new password hash and revokes every token
    /// of the account, and queues `mail` (the password-changed notice), in one transaction. A wrong code uses up a
    /// try. A code mailed to an address the account no longer has is no live code: whoever changed the email
    /// meanwhile owns the account now. `audit` commits only with `.redeemed`. Never refused by a budget.
    func redeemMailedCode(of account: AccountID, codeHash: [UInt8], nowMs: Int64, newPasswordHash: String,
                          audit: AuditRecord?, mail: [QueuedMail],
                          completion: @escaping StorageCompletion<MailedCodeRedemption>)

    /// Claims up to `limit` queued mails that are due at `nowMs` and not claimed by a live claim, for `leaseMs`,
    /// oldest due first. On a shared database two daemons never claim the same row at once (`FOR UPDATE SKIP
    /// LOCKED`). Never refused by a budget: the daemon's sender calls it.
    func claimDueMail(claimant: String, nowMs: Int64, leaseMs: Int64, limit: Int,
                      completion: @escaping StorageCompletion<[ClaimedMail]>)

    /// Records what became of a claimed mail (a hand-off counts as an attempt, whatever came of it). False,
    /// changing nothing, when the claim is no longer `claimant`'s (it expired and another daemon took it) or the
    /// mail is no longer queued. `audit` (the sender's `mail_failed`, for a `.failed` one) commits only with true.
    /// Never refused by a budget.
    func finishMail(_ id: MailID, claimant: String, outcome: MailHandOffResult, audit: AuditRecord?,
                    completion: @escaping StorageCompletion<Bool>)

    /// Mails for `admin.mail.list`, newest first, never their message or code.
    func listMail(status: MailStatus?, limit: Int, completion: @escaping StorageCompletion<[MailListing]>)

    /// How many mails are queued, failed and sent, for `admin.stats`.
    func mailCounts(completion: @escaping StorageCompletion<MailCounts>)
}

/// An outbox row's id.
public typealias MailID = Int64

/// The fixed caps of the outbox.
public enum MailLimits {
    /// Mails queued for one account at once (protocol.md §Limits of v3); past it a code mail is refused and a
    /// notice is not queued.
    public static let queuedPerAccount = 10
    /// How long a mailed code lives by default (`[Mail] CodeMinutes=`).
    public static let defaultCodeMinutes = 15
    /// Wrong tries that kill a mailed code.
    public static let triesPerCode = 5
}

/// What a mailed code is for.
public enum MailCodePurpose: String, Hashable, Sendable, CaseIterable {
    case verifyEmail = "verify_email"
    case recover

    /// The kind of mail that carries a code of this purpose.
    public var kind: MailKindName {
        switch self {
        case .verifyEmail: .verification
        case .recover: .recovery
        }
    }
}

extension MailKindName {
    /// The kinds that carry a code: a deletion takes the account's queued ones with it (their codes go with the
    /// account), and leaves its notices queued.
    public static let carryingCode: [MailKindName] = MailCodePurpose.allCases.map(\.kind)
}

extension MailLimits {
    /// The mails of a write that are queued when the account has `queued` already: the first ones, up to the cap;
    /// the rest are skipped, and the write goes ahead.
    public static func admitted(_ mails: [QueuedMail], queued: Int) -> ArraySlice<QueuedMail> {
        mails.prefix(max(0, queuedPerAccount - max(0, queued)))
    }

    /// How long after `createdAtMs` the next code of its purpose may be made, at `nowMs`; nil when it may be now.
    public static func tooSoon(createdAtMs: Int64, minimumIntervalMs: Int64, nowMs: Int64) -> Int64? {
        let (sum, late) = createdAtMs.addingReportingOverflow(max(0, minimumIntervalMs))
        let due = late ? Int64.max : sum
        let (difference, overflow) = due.subtractingReportingOverflow(nowMs)
        let wait = overflow ? (nowMs < 0 ? Int64.max : Int64.min) : difference
        return wait > 0 ? wait : nil
    }
}

/// A mailed code as stored: its keyed hash, never its digits.
public struct NewMailCode: Equatable, Sendable {
    public var purpose: MailCodePurpose
    public var codeHash: [UInt8]
    /// Unix milliseconds after which the code is dead (`CodeMinutes` after it was made).
    public var expiresAtMs: Int64
    /// The address the code went to: a verification applies only while the account's email is still this one.
    public var email: String

    public init(purpose: MailCodePurpose, codeHash: [UInt8], expiresAtMs: Int64, email: String) {
        self.purpose = purpose
        self.codeHash = codeHash
        self.expiresAtMs = expiresAtMs
        self.email = email
    }
}

/// A mail to queue in the transaction of the write that causes it.
public struct QueuedMail: Equatable, Sendable {
    /// The account it is about (kept after the account is deleted: the deletion's notice names it).
    public var account: AccountID
    public var kind: MailKindName
    /// The address it goes to, as `SendmailProgram` takes it.
    public var recipient: String
    /// The whole RFC 5322 message (`MailMessage.bytes`), sealed with the daemon's key: it may hold a code.
    public var sealedMessage: [UInt8]
    /// The code the mail carries, which replaces the account's unused code of its purpose; nil for a notice.
    public var code: NewMailCode?

    public init(account: AccountID, kind: MailKindName, recipient: String, sealedMessage: [UInt8],
                code: NewMailCode? = nil) {
        self.account = account
        self.kind = kind
        self.recipient = recipient
        self.sealedMessage = sealedMessage
        self.code = code
    }
}

/// What `queueCodeMail` did.
public enum CodeMailQueueing: Equatable, Sendable {
    case queued(MailID)
    /// The last code of this purpose is younger than the interval; try again after this many milliseconds.
    case tooSoon(retryAfterMs: Int64)
    case queueFull
    case gone
}

/// What `verifyEmail` found.
public enum MailCodeCheck: Equatable, Sendable {
    /// The code was right and is used up; the account's email is verified.
    case verified(email: String)
    /// The code was wrong; `triesLeft` more wrong ones kill the live code (0: it is dead now).
    case wrong(triesLeft: Int)
    /// No live code: none was sent, it expired, it was used, it died of wrong tries, or the email changed since.
    case noLiveCode
    case gone
}

/// What `redeemMailedCode` did.
public enum MailedCodeRedemption: Equatable, Sendable {
    /// The password is changed; these are the tokens revoked.
    case redeemed(revokedTokens: [[UInt8]])
    case wrong(triesLeft: Int)
    case noLiveCode
}

/// Where an outbox row stands.
public enum MailStatus: String, Hashable, Sendable, CaseIterable {
    /// Waiting for its next attempt (or claimed by a daemon handing it off now).
    case queued
    /// Handed off: the mail program exited 0.
    case sent
    /// Retried for the whole retry window without success; never tried again.
    case failed
}

/// A mail claimed for one hand-off.
public struct ClaimedMail: Equatable, Sendable {
    public var id: MailID
    public var account: AccountID
    public var kind: MailKindName
    public var recipient: String
    public var sealedMessage: [UInt8]
    /// Hand-offs tried before this one.
    public var attempts: Int
    /// Unix milliseconds when it was queued: the retry window counts from here.
    public var queuedAtMs: Int64

    public init(id: MailID, account: AccountID, kind: MailKindName, recipient: String, sealedMessage: [UInt8],
                attempts: Int, queuedAtMs: Int64) {
        self.id = id
        self.account = account
        self.kind = kind
        self.recipient = recipient
        self.sealedMessage = sealedMessage
        self.attempts = attempts
        self.queuedAtMs = queuedAtMs
    }
}

/// What became of one hand-off.
public enum MailHandOffResult: Equatable, Sendable {
    case sent(atMs: Int64)
    /// Not handed off; try again at `nextAttemptAtMs`. `error` is a `SendmailFailure` reason, never output.
    case retry(nextAttemptAtMs: Int64, error: String)
    case failed(error: String)
}

/// One outbox row as `admin.mail.list` shows it.
public struct MailListing: Equatable, Sendable {
    public var id: MailID
    public var account: AccountID
    public var kind: MailKindName
    public var recipient: String
    public var status: MailStatus
    public var attempts: Int
    public var lastError: String?
    public var queuedAtMs: Int64
    /// When it is tried next; nil once it is sent or failed.
    public var nextAttemptAtMs: Int64?
    public var sentAtMs: Int64?

    public init(id: MailID, account: AccountID, kind: MailKindName, recipient: String, status: MailStatus,
                attempts: Int, lastError: String?, queuedAtMs: Int64, nextAttemptAtMs: Int64?, sentAtMs: Int64?) {
        self.id = id
        self.account = account
        self.kind = kind
        self.recipient = recipient
        self.status = status
        self.attempts = attempts
        self.lastError = lastError
        self.queuedAtMs = queuedAtMs
        self.nextAttemptAtMs = nextAttemptAtMs
        self.sentAtMs = sentAtMs
    }
}

/// `admin.stats` `mail`.
public struct MailCounts: Equatable, Sendable {
    public var queued: Int
    public var failed: Int
    public var sent: Int

    public init(queued: Int, failed: Int, sent: Int) {
        self.queued = queued
        self.failed = failed
        self.sent = sent
    }
}

extension CodeMailQueueing {
    /// Whether the mail went into the outbox (what its audit entry waits for).
    public var isQueued: Bool {
        if case .queued = self { true } else { false }
    }
}

extension MailCodeCheck {
    /// Whether the email is verified now (what its audit entry waits for).
    public var isVerified: Bool {
        if case .verified = self { true } else { false }
    }
}

extension MailedCodeRedemption {
    /// Whether the password was set (what its audit entry and its notice wait for).
    public var isRedeemed: Bool {
        if case .redeemed = self { true } else { false }
    }
}

extension QueuedMail {
    /// This mail without its code: what a deletion queues (its notice), since the account's codes go with it.
    public var withoutCode: QueuedMail {
        var mail = self
        mail.code = nil
        return mail
    }
}

extension AuditRecord {
    /// The entry of a mail of `kind` queued with the change this entry records: one per mail the outbox took,
    /// filed under the change's account and peer, with the mail's kind as its reason (never its code).
    public func mailQueued(_ kind: MailKindName) -> AuditRecord {
        .mailQueued(kind, username: username, peer: peer)
    }

    /// The entry of a mail of `kind` queued for `username`'s account at `peer`'s asking.
    public static func mailQueued(_ kind: MailKindName, username: String?, peer: AuditPeer) -> AuditRecord {
        AuditRecord(event: .mailQueued, username: username, peer: peer, reason: kind.rawValue)
    }
}
