import RosterCore
import RosterCrypto
import RosterRuntime
import RosterStorage

/// The daemon's mail sender (protocol.md §Email): it takes due mail from the outbox, hands each to the host's mail
/// program off the loop, and records what became of it.
///
/// RULES
///   • It claims due mail (`claimDueMail`, charged to the daemon) at start, every `pollInterval`, and when poked
///     (a mail was queued), under a claimant name unique to this run, for `leaseMs`: longer than a hand-off can
///     take (the 30 s timeout, the kill grace, the write that marks it), so a claim lapses only when its daemon
///     died or lost its storage.
///   • One claim at a time, of at most `Limits.claimsPerTick` mails and never more than the hand-off slots free
///     (`Limits.inFlight` at once), so a claimed mail starts at once and never waits in a queue while its lease
///     runs. After a full batch it claims again as slots free.
///   • Each mail is opened with the daemon's mail key and given to `[Mail] Sendmail=` on the mail lane. Then
///     `finishMail`: `.sent` at exit 0; after a failure that may pass (exit 75 or any other, a signal, the timeout,
///     a program that would not start, a busy lane) `.retry` at `MailRetrySchedule`'s next time, or `.failed`
///     once the mail's window is over; `.failed` at once when no retry can help (an address the program cannot
///     take, a message this key does not open). A failed mail writes the audit entry `mail_failed` with its kind.
///   • A finish that finds the claim gone (it lapsed and another daemon took the mail) changes nothing and is
///     noted at debug only: that daemon answers for the mail now.
///   • The journal names a mail by kind, recipient's domain and outbox id, never by the address's local part, its
///     code or its body; the mail program's own words are logged with the recipient's address and local part
///     blanked out (`MailLogText`).
///   • With `Sendmail=` empty nothing is claimed and what is queued waits. A reload applies at the next claim.
///   • `stop` cancels the timer and claims nothing more. A hand-off running then is recorded if it ends while the
///     loop still runs; if not, its claim lapses and the mail is handed off again: at least once, never zero times.
final class MailSender {
    /// How much the sender takes on at once.
    struct Limits: Equatable, Sendable {
        /// Mails one claim takes at most.
        var claimsPerTick: Int
        /// Hand-offs running at once at most: the mail lane's threads.
        var inFlight: Int

        static let standard = Limits(claimsPerTick: 8, inFlight: 4)
    }

    static let pollInterval: Duration = .seconds(10)
    /// Three hand-off timeouts: the program's 30 s, its kill grace, and the write that marks the mail fit well.
    static let leaseMs: Int64 = 3 * MailRetrySchedule.handOffTimeout.nanoseconds / 1_000_000
    /// How a mail that no retry can help is recorded.
    static let unopenable = "message_unopenable"

    private enum Timer: Hashable {
        case poll
    }

    private let scheduler: any Scheduler
    private let storage: BoundStorage<any MailStorage>
    private let lane: any MailHandOffLane
    /// Opens the sealed messages (`AccountSecrets.mailSeal`).
    private let seal: SecretKey
    private let wallClock: any WallClock
    /// Unique to this run of the daemon: what the outbox's claims are held under.
    let claimant: String
    /// Who the audit log says gave a mail up: the daemon itself.
    private let auditPeer: AuditPeer
    /// The host name the default `From=` is made of.
    private let hostName: String
    private let schedule: MailRetrySchedule
    private let limits: Limits
    private let timers: KeyedTimers<Timer>
    /// The `[Mail]` settings in force: a reload replaces them, and the next claim follows them.
    var settings: MailSettings
    /// Read at each use: a reload's log level reaches the sender's lines at once.
    var logger: Logger
    /// The outbox ids handed to the program and not yet back.
    private(set) var handingOff: Set<MailID> = []
    private var claiming = false
    /// Asked to claim while a claim ran or no slot was free, or the last claim was a full batch.
    private var claimAgain = false
    private var claimsFailing = false
    private var isStopped = false

    init(scheduler: any Scheduler, storage: BoundStorage<any MailStorage>, lane: any MailHandOffLane, seal: SecretKey,
         wallClock: any WallClock, claimant: String, auditPeer: AuditPeer, hostName: String, settings: MailSettings,
         logger: Logger, schedule: MailRetrySchedule = .standard, limits: Limits = .standard) {
        self.scheduler = scheduler
        self.timers = KeyedTimers(on: scheduler)
        self.storage = storage
        self.lane = lane
        self.seal = seal
        self.wallClock = wallClock
        self.claimant = claimant
        self.auditPeer = auditPeer
        self.hostName = hostName
        self.settings = settings
        self.logger = logger
        self.schedule = schedule
        self.limits = Limits(claimsPerTick: max(1, limits.claimsPerTick), inFlight: max(1, limits.inFlight))
    }

    /// A claimant name no other run of any daemon uses: the host, the pid and 64 random bits.
    static func uniqueClaimant(hostName: String, pid: Int32) throws(CryptoError) -> String {
        let hex = try RandomBytes.make(count: 8).map { byte in
            String(byte >> 4, radix: 16) + String(byte & 0x0F, radix: 16)
        }.joined()
        return String(hostName.prefix(64)) + "/\(pid)/" + hex
    }

    /// Claims what is due now, and then every `pollInterval`.
    func start() {
        guard !isStopped else { return }
        poll()
    }

    /// A mail was queued: claim now rather than at the next poll.
    func poke() {
        claim()
    }

    /// Claims nothing more (the daemon is stopping); see the rules for a hand-off that runs.
    func stop() {
        isStopped = true
        timers.cancelAll()
    }

    private func poll() {
        claim()
        guard !isStopped else { return }
        timers.set(.poll, at: scheduler.now + Self.pollInterval) { [weak self] in self?.poll() }
    }

    // MARK: Claiming

    private func claim() {
        guard !isStopped, let path = settings.sendmail else { return }
        let free = limits.inFlight - handingOff.count
        guard !claiming, free > 0 else {
            claimAgain = true
            return
        }
        claiming = true
        claimAgain = false
        let limit = min(limits.claimsPerTick, free)
        let program = SendmailProgram(path: path, timeout: MailRetrySchedule.handOffTimeout)
        let sender = settings.sender(hostName: hostName).address.text
        storage.acting(for: .daemon).claimDueMail(claimant: claimant, nowMs: wallClock.nowMs(), leaseMs: Self.leaseMs,
                                                  limit: limit) { [weak self] result in
            self?.claimed(result, limit: limit, program: program, sender: sender)
        }
    }

    private func claimed(_ result: Result<[ClaimedMail], StorageFailure>, limit: Int, program: SendmailProgram,
                         sender: String) {
        claiming = false
        switch result {
        case .success(let mails):
            if claimsFailing {
                claimsFailing = false
                logger.info("mail: the outbox answers again", [("ROSTER_EVENT", "mail_claims_resumed")])
            }
            if mails.count >= limit { claimAgain = true }
            for mail in mails { handOff(mail, program: program, sender: sender) }
        case .failure(let failure):
            // Claimed again at the next poll, not now: a storage that is down may refuse at once, every time.
            claimAgain = false
            // The storage's own lines tell of an outage; one here says mail waits, then quiet until it is over.
            let line = "mail: due mail not claimed (\(failure)); it waits in the outbox"
            if claimsFailing {
                logger.debug(line, [("ROSTER_EVENT", "mail_claim_failed")])
            } else {
                claimsFailing = true
                logger.warning(line, [("ROSTER_EVENT", "mail_claim_failed")])
            }
        }
        if claimAgain { claim() }
    }

    // MARK: Handing off

    private func handOff(_ mail: ClaimedMail, program: SendmailProgram, sender: String) {
        guard let recipient = try? MailAddress(parsing: mail.recipient) else {
            let failure = SendmailFailure(reason: .invalidRecipient, detail: "the recipient is no mail address")
            return finish(mail, domain: nil, outcome: .failed(failure))
        }
        guard let message = MailWriter.message(of: mail, key: seal) else {
            logger.error("mail: outbox \(mail.id) (\(mail.kind.rawValue) to \(recipient.domain)) does not open with "
                         + "this key file; it is failed", fields(mail, domain: recipient.domain, event: "mail_failed")
                         + [("ROSTER_MAIL_ERROR", Self.unopenable)])
            return record(mail, .failed(error: Self.unopenable))
        }
        handingOff.insert(mail.id)
        lane.handOff(message, with: program, from: sender, to: recipient.text) { [weak self] outcome in
            guard let self else { return }
            self.handingOff.remove(mail.id)
            self.finish(mail, domain: recipient.domain, outcome: MailLogText.withoutRecipient(outcome, recipient))
            if self.claimAgain { self.claim() }
        }
    }

    /// What a hand-off's outcome makes of a mail at `nowMs` (pure; see the rules).
    static func result(of outcome: SendmailOutcome, for mail: ClaimedMail, nowMs: Int64,
                       schedule: MailRetrySchedule) -> MailHandOffResult {
        switch outcome {
        case .handedOff:
            return .sent(atMs: nowMs)
        case .failed(let failure):
            guard failure.retryable else { return .failed(error: failure.reason.rawValue) }
            switch schedule.afterFailure(attempt: mail.attempts + 1, queuedAtMs: mail.queuedAtMs, nowMs: nowMs) {
            case .retry(let atMs): return .retry(nextAttemptAtMs: atMs, error: failure.reason.rawValue)
            case .giveUp: return .failed(error: failure.reason.rawValue)
            }
        }
    }

    /// The audit entry of a mail given up: `mail_failed`, its kind as the reason, never its code or address.
    static func failedAudit(kind: MailKindName, peer: AuditPeer) -> AuditRecord {
        AuditRecord(event: .mailFailed, username: nil, peer: peer, outcome: .failed, reason: kind.rawValue)
    }

    private func finish(_ mail: ClaimedMail, domain: String?, outcome: SendmailOutcome) {
        let nowMs = wallClock.nowMs()
        let result = Self.result(of: outcome, for: mail, nowMs: nowMs, schedule: schedule)
        let attempt = mail.attempts + 1
        let shown = "\(mail.kind.rawValue) mail to \(domain ?? "an address that is none") (outbox \(mail.id), "
            + "attempt \(attempt))"
        let said: String
        switch outcome {
        case .handedOff: said = ""
        case .failed(let failure): said = failure.reason.rawValue + ": " + failure.detail
            + (failure.excerpt.isEmpty ? "" : "; it said: " + failure.excerpt)
        }
        switch result {
        case .sent:
            logger.info("mail: handed off the \(shown)", fields(mail, domain: domain, event: "mail_sent"))
        case .retry(let nextMs, let error):
            logger.warning("mail: the \(shown) was not handed off (\(said)); tried again in "
                           + ConfigValue.format(.milliseconds(max(0, nextMs - nowMs))),
                           fields(mail, domain: domain, event: "mail_retry") + [("ROSTER_MAIL_ERROR", error)])
        case .failed(let error):
            logger.error("mail: the \(shown) is failed (\(said)); it is not tried again",
                         fields(mail, domain: domain, event: "mail_failed") + [("ROSTER_MAIL_ERROR", error)])
        }
        record(mail, result)
    }

    private func record(_ mail: ClaimedMail, _ result: MailHandOffResult) {
        var audit: AuditRecord?
        if case .failed = result { audit = Self.failedAudit(kind: mail.kind, peer: auditPeer) }
        storage.acting(for: .daemon).finishMail(mail.id, claimant: claimant, outcome: result,
                                                audit: audit) { [weak self] answer in
            guard let self else { return }
            let fields = [("ROSTER_EVENT", "mail_unmarked"), ("ROSTER_MAIL_ID", String(mail.id))]
            switch answer {
            case .success(true):
                break
            case .success(false):
                self.logger.debug("mail: outbox \(mail.id) was claimed again elsewhere meanwhile; that claim answers "
                                  + "for it", fields)
            case .failure(let failure):
                self.logger.warning("mail: outbox \(mail.id) not marked (\(failure)); its claim lapses and it is "
                                    + "handed off again", fields)
            }
        }
    }

    private func fields(_ mail: ClaimedMail, domain: String?, event: String) -> [(String, String)] {
        [("ROSTER_EVENT", event), ("ROSTER_MAIL_KIND", mail.kind.rawValue), ("ROSTER_MAIL_DOMAIN", domain ?? ""),
         ("ROSTER_MAIL_ID", String(mail.id)), ("ROSTER_MAIL_ATTEMPT", String(mail.attempts + 1))]
    }
}
