import Glibc
import RosterCore

/// Why a message was not handed off; the raw value is stable, for logs and a queued message's last error.
public enum SendmailFailureReason: String, Equatable, Sendable, CaseIterable {
    /// The program exited 75 (EX_TEMPFAIL): the mail system asks to try again later.
    case tempfail
    /// Any other non-zero exit.
    case exitStatus = "exit_status"
    /// A signal ended it (not ours: see `timeout`).
    case signal
    /// It exited 0 without taking the whole message on stdin.
    case messageNotRead = "message_not_read"
    /// It ended, but its status was lost (something else reaped it).
    case statusUnknown = "status_unknown"
    /// It was still running at the timeout, and was killed.
    case timeout
    /// No such program (ENOENT, ENOTDIR).
    case programNotFound = "program_not_found"
    /// Not allowed to run it (EACCES, EPERM).
    case permissionDenied = "permission_denied"
    /// Not a program the kernel can run (ENOEXEC: no `#!` line, another architecture).
    case notExecutable = "not_executable"
    /// The process could not be made (EMFILE, EAGAIN, ENOMEM…).
    case startFailed = "start_failed"
    /// The mail lane refused the job (its queue is full or it is stopping).
    case laneBusy = "lane_busy"
    /// The sender is no argument sendmail can take (see `MailSettings.addressProblem`).
    case invalidSender = "invalid_sender"
    /// The recipient is no argument sendmail can take.
    case invalidRecipient = "invalid_recipient"

    /// Which kind of failure it is.
    public var kind: SendmailFailure.Kind {
        switch self {
        case .tempfail, .exitStatus, .signal, .messageNotRead, .statusUnknown, .laneBusy: .temporary
        case .timeout: .timedOut
        case .programNotFound, .permissionDenied, .notExecutable, .startFailed: .couldNotStart
        case .invalidSender, .invalidRecipient: .refused
        }
    }
}

/// A message the program did not take, and why.
public struct SendmailFailure: Equatable, Sendable {
    /// What to do about a failure.
    public enum Kind: Equatable, Sendable {
        /// The program ran and did not take the message: try again later.
        case temporary
        /// The program did not finish in time: try again later.
        case timedOut
        /// The program could not be started (the configuration or the host is wrong): try again later, and tell
        /// the operator.
        case couldNotStart
        /// The message can never be given to the program as addressed: do not try again.
        case refused
    }

    public var reason: SendmailFailureReason
    /// In our words, for the operator: "exit status 1", "killed by signal 9", "posix_spawn …: No such file or
    /// directory".
    public var detail: String
    /// The start of what the program said on stderr (or stdout, when stderr was silent): one line, at most
    /// `SendmailProgram.excerptLimit` characters, without control characters.
    public var excerpt: String

    public init(reason: SendmailFailureReason, detail: String, excerpt: String = "") {
        self.reason = reason
        self.detail = detail
        self.excerpt = excerpt
    }

    public var kind: Kind { reason.kind }
    /// Whether a later attempt may succeed.
    public var retryable: Bool {
        switch kind {
        case .temporary, .timedOut, .couldNotStart: true
        case .refused: false
        }
    }
}

/// What became of one message given to the host's sendmail-compatible program.
public enum SendmailOutcome: Equatable, Sendable {
    /// It exited 0 having read the whole message: the mail system has it now.
    case handedOff
    case failed(SendmailFailure)

    /// Stable, for logs: `handed_off` or the failure's reason.
    public var reason: String {
        switch self {
        case .handedOff: "handed_off"
        case .failed(let failure): failure.reason.rawValue
        }
    }
}

/// The host's mail system, reached through its sendmail-compatible program (`[Mail] Sendmail=`): one run of
/// `PROGRAM -i -f FROM -- RCPT` per message, the message on stdin, exit 0 taken as handed off (see
/// `ChildProcess` for how the run is contained: no shell, a clean environment, bounded output, a timeout).
/// `handOff` blocks: call it on a worker (`handOff(on:loop:…)`), never on the loop.
public struct SendmailProgram: Equatable, Sendable {
    /// The longest excerpt of the program's output kept in a failure.
    public static let excerptLimit = 200
    /// `-i`: a line holding only `.` is part of the message, not its end; `-f`: the envelope sender; `--`: what
    /// follows is a recipient even if it looks like an option.
    public static func arguments(from sender: String, to recipient: String) -> [String] {
        ["-i", "-f", sender, "--", recipient]
    }

    public var path: String
    public var limits: ChildProcessLimits
    public var environment: [String]

    /// `timeout` is the whole run's, 30 s unless a test or the caller says otherwise.
    public init(path: String, timeout: Duration = .seconds(30), killGrace: Duration = .seconds(2),
                outputBytes: Int = 4096, environment: [String] = ChildProcess.cleanEnvironment) {
        self.path = path
        self.limits = ChildProcessLimits(timeout: timeout, killGrace: killGrace, outputBytes: outputBytes)
        self.environment = environment
    }

    /// Runs the program once for `message` (RFC 5322 bytes) from `sender` to `recipient`. Blocks for as long as
    /// the program runs, at most the timeout and the kill grace.
    public func handOff(_ message: [UInt8], from sender: String, to recipient: String) -> SendmailOutcome {
        if let problem = MailSettings.addressProblem(sender) {
            return .failed(SendmailFailure(reason: .invalidSender, detail: "the sender \(problem)"))
        }
        if let problem = MailSettings.addressProblem(recipient) {
            return .failed(SendmailFailure(reason: .invalidRecipient, detail: "the recipient \(problem)"))
        }
        let run = ChildProcess.run(path: path, arguments: Self.arguments(from: sender, to: recipient),
                                   environment: environment, input: message, limits: limits)
        return Self.outcome(of: run, messageBytes: message.count, timeout: limits.timeout)
    }

    /// How a run reads as a hand-off.
    static func outcome(of run: ChildProcessRun, messageBytes: Int, timeout: Duration) -> SendmailOutcome {
        let said = excerpt(run.stderr.kept.isEmpty ? run.stdout.kept : run.stderr.kept)
        func failed(_ reason: SendmailFailureReason, _ detail: String) -> SendmailOutcome {
            .failed(SendmailFailure(reason: reason, detail: detail, excerpt: said))
        }
        switch run.ending {
        case .exited(status: 0):
            guard run.inputWritten == messageBytes else {
                return failed(.messageNotRead, "exit status 0 after reading \(run.inputWritten) of \(messageBytes) bytes")
            }
            return .handedOff
        case .exited(status: 75):
            return failed(.tempfail, "exit status 75 (EX_TEMPFAIL)")
        case .exited(let status):
            return failed(.exitStatus, "exit status \(status)")
        case .signalled(let signal):
            return failed(.signal, "killed by signal \(signal)")
        case .timedOut(let signal):
            let ended = signal == SIGKILL ? "killed" : signal == 0 ? "it exited after SIGTERM" : "terminated"
            return failed(.timeout, "no answer within \(ConfigValue.format(timeout)), \(ended)")
        case .lost:
            return failed(.statusUnknown, "its exit status was reaped elsewhere (is SIGCHLD ignored?)")
        case .couldNotStart(let error):
            let reason: SendmailFailureReason
            switch error.errno {
            case ENOENT, ENOTDIR: reason = .programNotFound
            case EACCES, EPERM: reason = .permissionDenied
            case ENOEXEC: reason = .notExecutable
            default: reason = .startFailed
            }
            return .failed(SendmailFailure(reason: reason, detail: error.description))
        }
    }

    /// The start of `bytes` as one line an operator can read in a log: invalid UTF-8 replaced, every control,
    /// format or separator character (line breaks, escapes, bidi overrides) turned into a blank, blanks folded, at
    /// most `excerptLimit` characters and an ellipsis if cut.
    public static func excerpt(_ bytes: [UInt8]) -> String {
        var line = ""
        var pendingBlank = false
        var count = 0
        for scalar in String(decoding: bytes, as: UTF8.self).unicodeScalars {
            let blank: Bool
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .spaceSeparator: blank = true
            default: blank = false
            }
            if blank {
                pendingBlank = !line.isEmpty
                continue
            }
            if pendingBlank {
                guard count < excerptLimit else { return line + "…" }
                line.unicodeScalars.append(" ")
                count += 1
                pendingBlank = false
            }
            guard count < excerptLimit else { return line + "…" }
            line.unicodeScalars.append(scalar)
            count += 1
        }
        return line
    }
}

extension SendmailProgram {
    /// Hands `message` off on one of `pool`'s workers and calls `completion` on `loop`'s thread with the outcome;
    /// a job the pool refuses (full, or stopping) completes at once as `lane_busy`. Give mail a pool of its own: a
    /// program that hangs holds its worker for the whole timeout.
    public func handOff<Context>(_ message: [UInt8], from sender: String, to recipient: String,
                                 on pool: WorkerPool<Context>, loop: EventLoop, charge: QueueCharge,
                                 completion: @escaping (SendmailOutcome) -> Void) {
        let program = self
        pool.run(on: loop, charge: charge, { _ -> Result<SendmailOutcome, SendmailLaneRefusal> in
            .success(program.handOff(message, from: sender, to: recipient))
        }, refused: { SendmailLaneRefusal(retryAfterMs: $0) }, completion: { result in
            switch result {
            case .success(let outcome):
                completion(outcome)
            case .failure(let refusal):
                completion(.failed(SendmailFailure(reason: .laneBusy,
                                                   detail: "the mail lane is full; retry after \(refusal.retryAfterMs) ms")))
            }
        })
    }
}

/// The mail lane's refusal of a job, carried to `handOff(on:…)`'s completion.
public struct SendmailLaneRefusal: Error, Equatable {
    public var retryAfterMs: Int64
}
