import Glibc
import RosterCore
import RosterStore

extension Server {
    /// Opens (and migrates) the database, starts the worker pool, and builds a server ready to `listen`.
    public static func open(loop: EventLoop, config: DaemonConfig, databasePath: String,
                            logger: Logger) throws(StoreError) -> Server {
        let now = WallClock.nowMs()
        let database = try RosterSchema.open(path: databasePath, now: now)
        let cores = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        let threads = config.server.hashWorkers > 0 ? config.server.hashWorkers : cores
        let pool = WorkerPool<WorkerContext>(threads: threads, queueLimit: config.server.hashQueueLimit) {
            WorkerContext(databasePath: databasePath)
        }
        let accounts = Accounts(loop: loop, database: database, pool: pool, policy: config.policy, logger: logger)
        accounts.pruneExpired()
        let contacts = ContactsService(loop: loop, database: database, pool: pool, logger: logger)
        return Server(loop: loop, config: config, accounts: accounts, contacts: contacts, logger: logger)
    }
}
