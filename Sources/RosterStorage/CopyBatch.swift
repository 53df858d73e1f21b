import RosterCore

/// The rows `rosterd --copy-database` moves between backends, every column as it is stored (hashes as they are,
/// ids kept so that what refers to them still does).
public enum CopyBatch: Sendable {
    case accounts([CopiedAccount])
    case tokens([CopiedToken])
    case failures([CopiedFailure])
    /// Contacts with the search keys written with them, each with its owner and the card a client sent.
    case contacts([(account: AccountID, contact: StoredContact, card: String?)])
    /// Unused recovery codes, as their keyed hashes.
    case recoveryCodes([CopiedRecoveryCode])
    /// TOTP rows, the secrets still sealed: a copy never opens them.
    case totp([CopiedTOTP])
    /// Audit entries, oldest first, with their ids and times as they were.
    case audit([AuditEntry])
    /// The outbox, every row whatever its status: a queued mail moved by a copy is still sent by the target.
    case mail([CopiedMail])
    /// Mailed codes, as their keyed hashes: a code in flight during a copy still works on the target.
    case mailCodes([CopiedMailCode])
    /// Passkeys with their public keys and counts: a passkey copied still logs in, and its count still only
    /// moves forward.
    case passkeys([StoredPasskey])
    /// Each account's WebAuthn user handle: the authenticators hold it, so a copy keeps it as it was.
    case passkeyHandles([CopiedPasskeyHandle])
    /// App passwords as their keyed hashes: an app password copied still logs a DAV client in (under the same key
    /// file).
    case appPasswords([StoredAppPassword])
}

/// One account as a copy moves it, with its password hash.
public struct CopiedAccount: Equatable, Sendable {
    public var account: Account
    public var passwordHash: String
    /// The last log-in and the lock, so that a copy never unlocks an account.
    public var lastLoginAtMs: Int64?
    public var lockedAtMs: Int64?
    public var lockedReason: String?

    public init(account: Account, passwordHash: String, lastLoginAtMs: Int64? = nil, lockedAtMs: Int64? = nil,
                lockedReason: String? = nil) {
        self.account = account
        self.passwordHash = passwordHash
        self.lastLoginAtMs = lastLoginAtMs
        self.lockedAtMs = lockedAtMs
        self.lockedReason = lockedReason
    }
}

/// One session token as a copy moves it: its hash only.
public struct CopiedToken: Equatable, Sendable {
    public var hash: [UInt8]
    public var account: AccountID
    public var createdAtMs: Int64
    public var lastUsedAtMs: Int64
    /// What the connection that logged in named itself in `session.hello`.
    public var client: String?

    public init(hash: [UInt8], account: AccountID, createdAtMs: Int64, lastUsedAtMs: Int64, client: String? = nil) {
        self.hash = hash
        self.account = account
        self.createdAtMs = createdAtMs
        self.lastUsedAtMs = lastUsedAtMs
        self.client = client
    }
}

/// One unused recovery code: its keyed hash (the key is the daemon's key file, which a copy does not move).
public struct CopiedRecoveryCode: Equatable, Sendable {
    public var account: AccountID
    public var hash: [UInt8]

    public init(account: AccountID, hash: [UInt8]) {
        self.account = account
        self.hash = hash
    }
}

/// One account's TOTP row as stored: the confirmed and pending secrets sealed, and the last accepted step.
public struct CopiedTOTP: Equatable, Sendable {
    public var account: AccountID
    public var sealed: [UInt8]?
    public var pending: [UInt8]?
    public var lastStep: Int64?

    public init(account: AccountID, sealed: [UInt8]?, pending: [UInt8]?, lastStep: Int64?) {
        self.account = account
        self.sealed = sealed
        self.pending = pending
        self.lastStep = lastStep
    }
}

/// One outbox row as a copy moves it: its message still sealed (the key file moves beside the copy), its claim
/// as it was (a claim expires by itself, so a mail claimed by a daemon that stopped is sent by the target).
public struct CopiedMail: Equatable, Sendable {
    public var id: MailID
    public var account: AccountID
    public var kind: MailKindName
    public var recipient: String
    public var sealedMessage: [UInt8]
    public var status: MailStatus
    public var attempts: Int
    public var nextAttemptAtMs: Int64?
    public var claimant: String?
    public var claimExpiresAtMs: Int64?
    public var lastError: String?
    public var queuedAtMs: Int64
    public var sentAtMs: Int64?

    public init(id: MailID, account: AccountID, kind: MailKindName, recipient: String, sealedMessage: [UInt8],
                status: MailStatus, attempts: Int, nextAttemptAtMs: Int64?, claimant: String?, claimExpiresAtMs: Int64?,
                lastError: String?, queuedAtMs: Int64, sentAtMs: Int64?) {
        self.id = id
        self.account = account
        self.kind = kind
        self.recipient = recipient
        self.sealedMessage = sealedMessage
        self.status = status
        self.attempts = attempts
        self.nextAttemptAtMs = nextAttemptAtMs
        self.claimant = claimant
        self.claimExpiresAtMs = claimExpiresAtMs
        self.lastError = lastError
        self.queuedAtMs = queuedAtMs
        self.sentAtMs = sentAtMs
    }
}

/// One account's mailed code of one purpose, as stored.
public struct CopiedMailCode: Equatable, Sendable {
    public var account: AccountID
    public var purpose: MailCodePurpose
    public var code: StoredMailCode

    public init(account: AccountID, purpose: MailCodePurpose, code: StoredMailCode) {
        self.account = account
        self.purpose = purpose
        self.code = code
    }
}

/// One account's WebAuthn user handle.
public struct CopiedPasskeyHandle: Equatable, Sendable {
    public var account: AccountID
    public var handle: [UInt8]

    public init(account: AccountID, handle: [UInt8]) {
        self.account = account
        self.handle = handle
    }
}

/// One failed log-in of a rate-limit key.
public struct CopiedFailure: Equatable, Sendable {
    public var key: String
    public var atMs: Int64

    public init(key: String, atMs: Int64) {
        self.key = key
        self.atMs = atMs
    }
}

/// How many rows of each kind a database holds: a copy compares the target's with the source's at the end.
public struct CopyCounts: Equatable, Sendable, CustomStringConvertible {
    public var accounts = 0
    public var tokens = 0
    public var failures = 0
    public var contacts = 0
    public var recoveryCodes = 0
    public var totp = 0
    public var audit = 0
    public var mail = 0
    public var mailCodes = 0
    public var passkeys = 0
    public var passkeyHandles = 0
    public var appPasswords = 0

    public init(accounts: Int = 0, tokens: Int = 0, failures: Int = 0, contacts: Int = 0, recoveryCodes: Int = 0,
                totp: Int = 0, audit: Int = 0, mail: Int = 0, mailCodes: Int = 0, passkeys: Int = 0,
                passkeyHandles: Int = 0, appPasswords: Int = 0) {
        self.accounts = accounts
        self.tokens = tokens
        self.failures = failures
        self.contacts = contacts
        self.recoveryCodes = recoveryCodes
        self.totp = totp
        self.audit = audit
        self.mail = mail
        self.mailCodes = mailCodes
        self.passkeys = passkeys
        self.passkeyHandles = passkeyHandles
        self.appPasswords = appPasswords
    }

    public var total: Int {
        accounts + tokens + failures + contacts + recoveryCodes + totp + audit + mail + mailCodes + passkeys
            + passkeyHandles + appPasswords
    }

    public var description: String {
        "\(accounts) accounts, \(tokens) tokens, \(failures) failed log-ins, \(contacts) contacts, "
            + "\(recoveryCodes) recovery codes, \(totp) TOTP secrets, \(audit) audit entries, \(mail) mails, "
            + "\(mailCodes) mailed codes, \(passkeys) passkeys, \(passkeyHandles) passkey user handles, "
            + "\(appPasswords) app passwords"
    }
}

extension CopyCounts {
    /// Counts the rows of `batch` under their kind.
    public mutating func add(_ batch: CopyBatch) {
        switch batch {
        case .accounts(let rows): accounts += rows.count
        case .tokens(let rows): tokens += rows.count
        case .failures(let rows): failures += rows.count
        case .contacts(let rows): contacts += rows.count
        case .recoveryCodes(let rows): recoveryCodes += rows.count
        case .totp(let rows): totp += rows.count
        case .audit(let rows): audit += rows.count
        case .mail(let rows): mail += rows.count
        case .mailCodes(let rows): mailCodes += rows.count
        case .passkeys(let rows): passkeys += rows.count
        case .passkeyHandles(let rows): passkeyHandles += rows.count
        case .appPasswords(let rows): appPasswords += rows.count
        }
    }
}

/// Why a copy stopped. Nothing of it is committed to the target: the copy is one transaction there.
public enum CopyError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The target holds rows already: a copy never merges.
    case targetNotEmpty(CopyCounts)
    /// The source or target could not be opened or read; the backend's own words.
    case failed(String)
    /// The target's counts differ from the source's after the copy.
    case countsDiffer(source: CopyCounts, target: CopyCounts)

    public var description: String {
        switch self {
        case .targetNotEmpty(let counts): "the target is not empty (\(counts)); a copy goes only into an empty database"
        case .failed(let why): why
        case .countsDiffer(let source, let target): "counts differ after the copy: source \(source), target \(target)"
        }
    }
}

/// A database read whole for a copy, offline (blocking calls, no loop), in a fixed order: accounts before what
/// refers to them.
public protocol CopySource: AnyObject {
    func counts() throws(CopyError) -> CopyCounts
    /// The check value of the key file the database was first served with (`KeyCheck`); nil if none was kept yet.
    func keyCheckValue() throws(CopyError) -> String?
    /// Hands every row to `body` in batches of at most `batchSize`, accounts first.
    func readAll(batchSize: Int, _ body: (CopyBatch) throws(CopyError) -> Void) throws(CopyError)
}

/// A database written by a copy, offline. Every batch goes into one transaction, opened by the first `write`;
/// `finish` makes the target usable (id sequences past the copied ids) and commits it. A target released before
/// `finish` rolls the copy back, so that a failed copy leaves nothing that refuses its retry.
public protocol CopyTarget: AnyObject {
    func counts() throws(CopyError) -> CopyCounts
    func write(_ batch: CopyBatch) throws(CopyError)
    /// Keeps the source's key check `value` in the copy's transaction, replacing the one a daemon started on the
    /// empty target may have left: the copied secrets need the source's key file, and a daemon with another is
    /// refused.
    func storeKeyCheckValue(_ value: String) throws(CopyError)
    func finish() throws(CopyError)
}
