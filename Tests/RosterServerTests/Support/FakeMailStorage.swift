import RosterCore
import RosterRuntime
import RosterStorage
import Testing
@testable import RosterServer

/// The outbox as `MailStorage` says it behaves, in memory, for the mail sender's tests: due mail claimed for a
/// lease, a lapsed claim claimable again, a finish taken only from the claim's holder. It conforms to
/// `MailStorage` alone; the calls that are not the sender's record an issue.
final class FakeMailStorage: MailStorage {
    struct Row {
        var mail: ClaimedMail
        var status: MailStatus = .queued
        var nextAttemptAtMs: Int64
        var claimant: String?
        var claimExpiresAtMs: Int64 = 0
        var lastError: String?
        var sentAtMs: Int64?
    }

    struct Claim: Equatable {
        var claimant: String
        var nowMs: Int64
        var leaseMs: Int64
        var limit: Int
    }

    struct Finish: Equatable {
        var id: MailID
        var claimant: String
        var outcome: MailHandOffResult
        var audit: AuditRecord?
        /// What the finish answered: false when the claim was no longer the finisher's.
        var accepted: Bool
    }

    private(set) var rows: [MailID: Row] = [:]
    private(set) var claims: [Claim] = []
    private(set) var finishes: [Finish] = []
    /// Who each call through `bound` was charged to.
    private(set) var charges: [QueueCharge] = []
    /// Every claim answers this while set.
    var claimFailure: StorageFailure?
    /// Answers wait for `releaseAnswers` while set (a backend on a worker); otherwise they come at once.
    var holdAnswers = false
    private var held: [() -> Void] = []
    private var nextID: MailID = 1

    /// The storage as the sender holds it, every call's charge recorded.
    var bound: BoundStorage<any MailStorage> {
        BoundStorage { [unowned self] charge in
            self.charges.append(charge)
            return self
        }
    }

    /// Puts a mail in the outbox, due at `dueAtMs` (its queued time unless given).
    @discardableResult
    func queue(kind: MailKindName = .verification, recipient: String = "alice@example.com", sealed: [UInt8],
               queuedAtMs: Int64, dueAtMs: Int64? = nil, attempts: Int = 0, account: AccountID = 7) -> MailID {
        let id = nextID
        nextID += 1
        rows[id] = Row(mail: ClaimedMail(id: id, account: account, kind: kind, recipient: recipient,
                                         sealedMessage: sealed, attempts: attempts, queuedAtMs: queuedAtMs),
                       nextAttemptAtMs: dueAtMs ?? queuedAtMs)
        return id
    }

    /// Another daemon takes the mail's claim (as after this one's lapsed).
    func steal(_ id: MailID, by claimant: String, untilMs: Int64) {
        rows[id]?.claimant = claimant
        rows[id]?.claimExpiresAtMs = untilMs
    }

    /// Runs the answers held so far, and those they lead to, in order.
    func releaseAnswers() {
        while !held.isEmpty {
            let next = held.removeFirst()
            next()
        }
    }

    private func answer(_ body: @escaping () -> Void) {
        if holdAnswers { held.append(body) } else { body() }
    }

    // MARK: The sender's calls

    func claimDueMail(claimant: String, nowMs: Int64, leaseMs: Int64, limit: Int,
                      completion: @escaping StorageCompletion<[ClaimedMail]>) {
        claims.append(Claim(claimant: claimant, nowMs: nowMs, leaseMs: leaseMs, limit: limit))
        if let claimFailure { return answer { completion(.failure(claimFailure)) } }
        let due = rows.values.filter { row in
            row.status == .queued && row.nextAttemptAtMs <= nowMs && (row.claimant == nil || row.claimExpiresAtMs <= nowMs)
        }.sorted { ($0.nextAttemptAtMs, $0.mail.id) < ($1.nextAttemptAtMs, $1.mail.id) }.prefix(limit)
        for row in due {
            rows[row.mail.id]?.claimant = claimant
            rows[row.mail.id]?.claimExpiresAtMs = nowMs + leaseMs
        }
        let claimed = due.map { rows[$0.mail.id]?.mail ?? $0.mail }
        answer { completion(.success(claimed)) }
    }

    func finishMail(_ id: MailID, claimant: String, outcome: MailHandOffResult, audit: AuditRecord?,
                    completion: @escaping StorageCompletion<Bool>) {
        guard var row = rows[id], row.status == .queued, row.claimant == claimant else {
            finishes.append(Finish(id: id, claimant: claimant, outcome: outcome, audit: audit, accepted: false))
            return answer { completion(.success(false)) }
        }
        row.claimant = nil
        row.mail.attempts += 1
        switch outcome {
        case .sent(let atMs):
            row.status = .sent
            row.sentAtMs = atMs
        case .retry(let nextMs, let error):
            row.nextAttemptAtMs = nextMs
            row.lastError = error
        case .failed(let error):
            row.status = .failed
            row.lastError = error
        }
        rows[id] = row
        finishes.append(Finish(id: id, claimant: claimant, outcome: outcome, audit: audit, accepted: true))
        answer { completion(.success(true)) }
    }

    // MARK: Not the sender's

    func queueCodeMail(of account: AccountID, _ mail: QueuedMail, minimumIntervalMs: Int64, audit: AuditRecord?,
                       completion: @escaping StorageCompletion<CodeMailQueueing>) {
        Issue.record("the sender queued a mail")
    }

    func verifyEmail(of account: AccountID, codeHash: [UInt8], nowMs: Int64, audit: AuditRecord?,
                     completion: @escaping StorageCompletion<MailCodeCheck>) {
        Issue.record("the sender checked a code")
    }

    func redeemMailedCode(of account: AccountID, codeHash: [UInt8], nowMs: Int64, newPasswordHash: String,
                          audit: AuditRecord?, mail: [QueuedMail],
                          completion: @escaping StorageCompletion<MailedCodeRedemption>) {
        Issue.record("the sender redeemed a code")
    }

    func listMail(status: MailStatus?, limit: Int, completion: @escaping StorageCompletion<[MailListing]>) {
        Issue.record("the sender listed the outbox")
    }

    func mailCounts(completion: @escaping StorageCompletion<MailCounts>) {
        Issue.record("the sender counted the outbox")
    }
}

/// The mail lane as the tests drive it: each hand-off waits until the test says how it went.
final class FakeMailLane: MailHandOffLane {
    struct HandOff {
        var message: [UInt8]
        var program: SendmailProgram
        var sender: String
        var recipient: String
        var completion: (SendmailOutcome) -> Void
    }

    /// Hand-offs given and not yet answered, oldest first.
    private(set) var running: [HandOff] = []
    /// Every hand-off ever given.
    private(set) var given = 0

    func handOff(_ message: [UInt8], with program: SendmailProgram, from sender: String, to recipient: String,
                 completion: @escaping (SendmailOutcome) -> Void) {
        given += 1
        running.append(HandOff(message: message, program: program, sender: sender, recipient: recipient,
                               completion: completion))
    }

    /// The program ended the `index`-th running hand-off with `outcome`.
    func end(_ outcome: SendmailOutcome, at index: Int = 0) {
        let handOff = running.remove(at: index)
        handOff.completion(outcome)
    }
}

/// Log lines with their levels, which the sender's tests judge (a lost claim is only debug).
final class LevelledLog: LogSink {
    struct Line: Sendable {
        let level: LogLevel
        let message: String
        let fields: [String: String]
    }

    private let kept = Locked<[Line]>([])

    var lines: [Line] { kept.withLock { $0 } }

    func write(level: LogLevel, message: String, fields: [(String, String)]) {
        let line = Line(level: level, message: message, fields: Dictionary(fields, uniquingKeysWith: { $1 }))
        kept.withLock { $0.append(line) }
    }

    func events(_ event: String) -> [Line] { lines.filter { $0.fields["ROSTER_EVENT"] == event } }
}
