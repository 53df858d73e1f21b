import RosterCore
import RosterRuntime

/// The daemon's two worker pools (issue 12). Argon2id alone runs on `hashing`, which stands back for the loop
/// (idle priority and its watchdog); durable writes, reads, imports, exports and libpwquality run on `storage`
/// at the daemon's own priority. A log-in's token, a resume or a logout therefore never waits behind anyone's
/// hashing, and each lane's fair queue keeps one user's imports from holding up another user's turn. The storage
/// workers also take turns at SQLite's one write lock (`WriteTurn`), in the order the queue handed out their jobs.
final class WorkerLanes {
    let hashing: WorkerPool<WorkerContext>
    let storage: WorkerPool<WorkerContext>

    init(settings: ServerSettings, cores: Int, databasePath: String) {
        let writeTurn = WriteTurn()
        let context: @Sendable () -> WorkerContext = { WorkerContext(databasePath: databasePath, writeTurn: writeTurn) }
        hashing = WorkerPool(threads: settings.hashWorkers > 0 ? settings.hashWorkers : cores,
                             budget: settings.hashingBudget, priority: .standBack, typicalJob: .milliseconds(40),
                             makeContext: context)
        // Two threads at least, so a long export or backup leaves one for everyone else's writes.
        storage = WorkerPool(threads: settings.storageWorkers > 0 ? settings.storageWorkers : max(2, cores),
                             budget: settings.storageBudget, priority: .normal, typicalJob: .milliseconds(5),
                             makeContext: context)
    }

    /// A reload's budgets apply to jobs queued from now on.
    func apply(_ settings: ServerSettings) {
        hashing.budget = settings.hashingBudget
        storage.budget = settings.storageBudget
    }
}

extension ServerSettings {
    /// `[Hashing] QueueLimit=` in all, of which one user (or one peer uid before a log-in) or one connection
    /// may hold half at most, so a flood of registrations from one uid always leaves room for another's log-in.
    var hashingBudget: QueueBudget {
        let half = max(1, hashQueueLimit / 2)
        return QueueBudget(jobs: hashQueueLimit, jobsPerPayer: min(maxQueuedJobsPerUser, half),
                           jobsPerConnection: min(maxQueuedJobsPerConnection, half), bytes: .max, bytesPerPayer: .max)
    }

    var storageBudget: QueueBudget {
        QueueBudget(jobs: maxQueuedJobs, jobsPerPayer: maxQueuedJobsPerUser, jobsPerConnection: maxQueuedJobsPerConnection,
                    bytes: maxQueuedImportBytes, bytesPerPayer: maxQueuedImportBytesPerUser)
    }
}

extension Connection {
    /// Who this connection's next job is charged to: its user once logged in, its peer uid before.
    var queueCharge: QueueCharge {
        QueueCharge(payer: session.user.map { .account($0.id) } ?? .peer(peer.uid), connection: id)
    }
}
