import RosterCore
import RosterRuntime

/// Where the mail sender hands a message to the host's mail program: off the loop, the outcome back on it.
protocol MailHandOffLane: AnyObject {
    /// Runs `program` once for `message` and calls `completion` on the loop with what became of it.
    func handOff(_ message: [UInt8], with program: SendmailProgram, from sender: String, to recipient: String,
                 completion: @escaping (SendmailOutcome) -> Void)
}

/// The mail program's own worker threads: never the password lanes nor the storage's, because a program that
/// hangs holds its thread for the whole hand-off timeout. As many threads as hand-offs may run at once
/// (`MailSender.Limits.inFlight`), so a claimed mail never waits in a queue while its lease runs; a job past
/// that is refused at once and the mail is retried.
final class SendmailLane: MailHandOffLane {
    private let pool: WorkerPool<Void>
    private let loop: EventLoop

    init(threads: Int, loop: EventLoop) {
        self.loop = loop
        let jobs = max(1, threads)
        pool = WorkerPool(threads: jobs,
                          budget: QueueBudget(jobs: jobs, jobsPerPayer: jobs, jobsPerConnection: jobs, bytes: .max,
                                              bytesPerPayer: .max),
                          priority: .normal, typicalJob: .seconds(1), makeContext: {})
    }

    func handOff(_ message: [UInt8], with program: SendmailProgram, from sender: String, to recipient: String,
                 completion: @escaping (SendmailOutcome) -> Void) {
        program.handOff(message, from: sender, to: recipient, on: pool, loop: loop, charge: .daemon,
                        completion: completion)
    }

    /// Lets a hand-off that runs finish (within its timeout) and takes no more.
    func stop() {
        pool.stop()
    }
}
