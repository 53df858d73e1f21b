import Glibc
import RosterCore
import RosterRuntime
import RosterStore

extension Server {
    /// Opens (and migrates) the database, starts the worker lanes, and builds a server ready to `listen`.
    public static func open(loop: EventLoop, config: DaemonConfig, databasePath: String,
                            logger: Logger) throws(StoreError) -> Server {
        let now = SystemWallClock().nowMs()
        let database = try RosterSchema.open(path: databasePath, now: now)
        let cores = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        let lanes = WorkerLanes(settings: config.server, cores: cores, databasePath: databasePath)
        let accounts = Accounts(loop: loop, database: database, lanes: lanes, policy: config.policy, logger: logger)
        accounts.pruneExpired()
        let contacts = ContactsService(storage: ContactStoreStorage(loop: loop, lane: lanes.storage, logger: logger))
        return Server(loop: loop, config: config, accounts: accounts, contacts: contacts, logger: logger)
    }
}
