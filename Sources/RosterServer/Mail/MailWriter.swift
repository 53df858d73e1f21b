import RosterCore
import RosterCrypto
import RosterRuntime
import RosterStorage

/// The account a mail is written to, as the method that queues it knows it.
struct MailRecipient: Equatable, Sendable {
    var account: AccountID
    /// The name as registered: what the mail calls the account, and what a recovery link carries.
    var display: String
    /// The address as stored.
    var email: String
    /// The language of the mail's words (the asking session's).
    var locale: RosterLocale
}

/// A mail that carries no code and no link: it tells of something that happened to the account.
enum MailNotice: CaseIterable, Sendable {
    case passwordChanged, emailChanged, totpDisabled, recoveryCodesMade, accountDeleted

    var kind: MailKind {
        switch self {
        case .passwordChanged: .passwordChanged
        case .emailChanged: .emailChanged
        case .totpDisabled: .totpDisabled
        case .recoveryCodesMade: .recoveryCodesMade
        case .accountDeleted: .accountDeleted
        }
    }
}

/// Why a mail could not be written; `reason` is stable.
enum MailWritingError: Error, Equatable, Sendable {
    /// A value would not go into a mail (the stored address is not one `MailAddress` takes, say).
    case message(MailMessageError)
    /// libsodium could not give randomness.
    case crypto(CryptoError)

    var reason: String {
        switch self {
        case .message(let error): error.reason
        case .crypto: "crypto_unavailable"
        }
    }
}

/// Writes the outbox's mails (protocol.md §Email): composed by `MailComposer` in the recipient's language, dated by
/// the injected wall clock, with a random Message-ID, and the whole message sealed with the daemon's mail key, as
/// TOTP secrets are sealed, since it may hold a code. A code mail also makes its code, of which only the keyed
/// hash leaves here (in `QueuedMail.code`); the digits exist only inside the sealed message.
///
/// The same `QueuedMail` is handed off however often it is retried, so a mail sent twice after a crash is the
/// same mail, with the same Message-ID and date, which mail readers show once.
struct MailWriter {
    /// Bytes drawn for each Message-ID: 128 bits, unique without a counter.
    static let messageIDBytes = 16

    let composer: MailComposer
    /// `mailSeal` seals the message, `mailCodes` keys the code's hash.
    let secrets: AccountSecrets
    let wallClock: any WallClock

    /// A mail with a fresh code for `purpose` (verification, recovery), valid `composer.codeMinutes`.
    func codeMail(_ purpose: MailCodePurpose, to recipient: MailRecipient) throws(MailWritingError) -> QueuedMail {
        let digits: String
        do throws(CryptoError) {
            digits = try MailCodes.generate()
        } catch {
            throw .crypto(error)
        }
        let code: MailCode
        do throws(MailMessageError) {
            code = try MailCode(digits)
        } catch {
            throw .message(error)
        }
        guard let hash = MailCodes.hash(digits, key: secrets.mailCodes) else { throw .message(.codeMalformed) }
        let kind: MailKind
        switch purpose {
        case .verifyEmail: kind = .verification(code: code)
        case .recover: kind = .recovery(code: code)
        }
        let nowMs = wallClock.nowMs()
        let stored = NewMailCode(purpose: purpose, codeHash: hash,
                                 expiresAtMs: nowMs + Int64(composer.codeMinutes) * 60_000, email: recipient.email)
        return try queued(kind, to: recipient, atMs: nowMs, code: stored)
    }

    /// A notice, with no code and no link.
    func notice(_ notice: MailNotice, to recipient: MailRecipient) throws(MailWritingError) -> QueuedMail {
        try queued(notice.kind, to: recipient, atMs: wallClock.nowMs(), code: nil)
    }

    /// The message a claimed mail holds, or nil when the key does not open it (another key file, an altered row).
    static func message(of mail: ClaimedMail, key: SecretKey) -> [UInt8]? {
        SecretBox.open(mail.sealedMessage, key: key)
    }

    private func queued(_ kind: MailKind, to recipient: MailRecipient, atMs nowMs: Int64,
                        code: NewMailCode?) throws(MailWritingError) -> QueuedMail {
        let unique: [UInt8]
        do throws(CryptoError) {
            unique = try RandomBytes.make(count: Self.messageIDBytes)
        } catch {
            throw .crypto(error)
        }
        let message: MailMessage
        do throws(MailMessageError) {
            let address = try MailAddress(parsing: recipient.email)
            message = try composer.message(kind: kind, username: recipient.display,
                                           to: MailMailbox(displayName: recipient.display, address: address),
                                           locale: recipient.locale, dateUnixMs: nowMs,
                                           messageID: composer.messageID(unique: unique))
        } catch {
            throw .message(error)
        }
        let sealed: [UInt8]
        do throws(CryptoError) {
            sealed = try SecretBox.seal(message.bytes, key: secrets.mailSeal)
        } catch {
            throw .crypto(error)
        }
        return QueuedMail(account: recipient.account, kind: kind.name, recipient: message.recipient.text,
                          sealedMessage: sealed, code: code)
    }
}
