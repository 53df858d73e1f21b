import Glibc
import RosterCore
import RosterCrypto
import RosterRuntime
import RosterStorage

extension Server {
    /// A server ready to `listen`, over storage the composition root opened (rosterd names the backend, the
    /// server never does): the password lanes started on `cores`, the contacts service over the same storage,
    /// and what expired while no daemon ran pruned. `secrets` come from the key file (`KeyFile`); `clock` is
    /// the one stored times are read against and TOTP codes are checked at. `hostName` is the default `From=`'s
    /// domain; mail goes out through the mail program's own threads (`SendmailLane`). Throws when libsodium
    /// cannot give the random name this run's mail claims go under.
    package static func assembled(loop: EventLoop, config: DaemonConfig, storage: any Storage, cores: Int,
                                  logger: Logger, secrets: AccountSecrets, hostName: String,
                                  clock: any WallClock = SystemWallClock()) throws(CryptoError) -> Server {
        let passwords = PasswordLanes(settings: config.server, cores: cores, policy: config.policy, loop: loop, logger: logger)
        let pid = getpid()
        let mail = MailHost(lane: SendmailLane(threads: MailSender.Limits.standard.inFlight, loop: loop),
                            hostName: hostName,
                            claimant: try MailSender.uniqueClaimant(hostName: hostName, pid: pid),
                            auditPeer: AuditPeer(uid: getuid(), pid: pid, client: "rosterd"))
        let server = Server(loop: loop, config: config, storage: storage, passwords: passwords,
                            contacts: ContactsService(storage: storage), logger: logger, secrets: secrets, clock: clock,
                            mail: mail)
        server.housekeeping.pruneExpired()
        return server
    }
}
