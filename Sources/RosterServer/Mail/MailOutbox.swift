import RosterCore
import RosterCrypto
import RosterRuntime
import RosterStorage

/// What the account procedures put into the outbox (protocol.md §Email): the mails a change causes, written for
/// the write that commits them, and the per-requester limit on code mails.
///
/// RULES
///   • With `Sendmail=` empty there is no mail: a code mail is refused `mail_unavailable`, a notice is not
///     written, and the change goes ahead (turning mail on later does not send a backlog of old notices).
///   • Notices are never limited and never stop their change: one that cannot be written (an address the
///     composer refuses, no randomness) is left out with a warning.
///   • A code mail counts against its requester's `MailPeerLimit` (10 a sliding minute) before it is written;
///     the per-account interval is the outbox's own (`MailStorage.queueCodeMail`), so it holds across daemons.
///   • `committed()` follows every write that queued mail: the sender claims it now, not at its next poll.
final class MailOutbox {
    /// The `[Mail]` settings in force; a reload replaces them.
    var settings: MailSettings
    var logger: Logger
    /// Told when a write queued mail (the sender's `poke`); the server sets it.
    var onCommitted: () -> Void = {}
    private let hostName: String
    private let secrets: AccountSecrets
    private let wallClock: any WallClock
    /// The peer limit's clock: monotonic, so a wall-clock step neither frees nor blocks a requester.
    private let scheduler: any Scheduler
    private var peerLimit = MailPeerLimit()

    init(settings: MailSettings, hostName: String, secrets: AccountSecrets, wallClock: any WallClock,
         scheduler: any Scheduler, logger: Logger) {
        self.settings = settings
        self.hostName = hostName
        self.secrets = secrets
        self.wallClock = wallClock
        self.scheduler = scheduler
        self.logger = logger
    }

    /// Whether mail is on.
    var enabled: Bool { settings.enabled }

    /// The notice to queue with a change of `account`, sent to `email` (the address it is about: the old one for
    /// an email change); none when mail is off, the account has no email, or it could not be written.
    func notice(_ notice: MailNotice, about account: Account, to email: String?,
                locale: RosterLocale) -> [QueuedMail] {
        guard enabled, let email else { return [] }
        let recipient = MailRecipient(account: account.id, display: account.display, email: email, locale: locale)
        switch write({ (writer: MailWriter) throws(MailWritingError) in try writer.notice(notice, to: recipient) }) {
        case .success(let mail):
            return [mail]
        case .failure(let error):
            logger.warning("mail: the \(notice.kind.name.rawValue) notice could not be written (\(error.reason)); the "
                           + "change goes ahead without it", [("ROSTER_USER", account.username)])
            return []
        }
    }

    /// A mail with a fresh code of `purpose` for `recipient`, counted against `requester`'s limit:
    /// `mail_unavailable` when mail is off, `rate_limited` past the limit, `internal` when it cannot be written.
    func codeMail(_ purpose: MailCodePurpose, to recipient: MailRecipient,
                  for requester: Requester) -> Result<QueuedMail, RosterError> {
        guard enabled else { return .failure(.mailUnavailable) }
        if case .limited(let retryAfterMs) = peerLimit.admit(requester, now: scheduler.now) {
            return .failure(.rateLimited(retryAfterMs: retryAfterMs))
        }
        return write { (writer: MailWriter) throws(MailWritingError) in
            try writer.codeMail(purpose, to: recipient)
        }.mapError { [logger] error in
            logger.error("mail: a \(purpose.kind.rawValue) mail could not be written (\(error.reason))")
            return .internal
        }
    }

    /// Forgets requesters with nothing left in the peer limit's window (housekeeping calls it).
    func sweep() {
        peerLimit.sweep(now: scheduler.now)
    }

    /// A write committed with mail in it.
    func committed() {
        onCommitted()
    }

    private func write(_ body: (MailWriter) throws(MailWritingError) -> QueuedMail) -> Result<QueuedMail, MailWritingError> {
        do throws(MailWritingError) {
            let composer: MailComposer
            do throws(MailMessageError) {
                composer = try settings.composer(hostName: hostName)
            } catch {
                throw .message(error)
            }
            return .success(try body(MailWriter(composer: composer, secrets: secrets, wallClock: wallClock)))
        } catch {
            return .failure(error)
        }
    }
}
