import RosterCore
import RosterCrypto
import RosterRuntime
import RosterStorage

extension Server {
    /// A server ready to `listen`, over storage the composition root opened (rosterd names the backend, the
    /// server never does): the password lanes started on `cores`, the contacts service over the same storage,
    /// and what expired while no daemon ran pruned. `secrets` come from the key file (`KeyFile`); `clock` is
    /// the one stored times are read against and TOTP codes are checked at.
    package static func assembled(loop: EventLoop, config: DaemonConfig, storage: any Storage, cores: Int,
                                  logger: Logger, secrets: AccountSecrets,
                                  clock: any WallClock = SystemWallClock()) -> Server {
        let passwords = PasswordLanes(settings: config.server, cores: cores, policy: config.policy, loop: loop, logger: logger)
        let server = Server(loop: loop, config: config, storage: storage, passwords: passwords,
                            contacts: ContactsService(storage: storage), logger: logger, secrets: secrets, clock: clock)
        server.housekeeping.pruneExpired()
        return server
    }
}
