import RosterCore

extension ServerSettings {
    /// `[Hashing] QueueLimit=` in all, of which one user (or one peer uid before a log-in) or one connection
    /// may hold half at most, so a flood of registrations from one uid always leaves room for another's log-in.
    public var hashingBudget: QueueBudget {
        let half = max(1, hashQueueLimit / 2)
        return QueueBudget(jobs: hashQueueLimit, jobsPerPayer: min(maxQueuedJobsPerUser, half),
                           jobsPerConnection: min(maxQueuedJobsPerConnection, half), bytes: .max, bytesPerPayer: .max)
    }

    /// The storage workers' budget (and libpwquality's lane's): `MaxQueuedJobs=` and its per-user and
    /// per-connection shares, and the import bytes they may hold.
    public var storageBudget: QueueBudget {
        QueueBudget(jobs: maxQueuedJobs, jobsPerPayer: maxQueuedJobsPerUser, jobsPerConnection: maxQueuedJobsPerConnection,
                    bytes: maxQueuedImportBytes, bytesPerPayer: maxQueuedImportBytesPerUser)
    }
}
