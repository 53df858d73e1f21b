import Glibc
import RosterCore
import RosterCrypto
import RosterHostIO
import RosterRuntime
import RosterProtocol
import RosterServer
import RosterStorage

/// rosterd's three ways to run, each returning its exit status: check a config, back up offline, or serve.
public enum Daemon {
    /// `--check-config`: the verdict on the files, as a reload would judge them.
    public static func checkConfig(_ options: DaemonOptions) -> Int32 {
        do {
            let config = try ConfigLoader.load(configPath: options.configPath)
            print(LogText.escaped("configuration ok (preset \(config.policy.preset.rawValue), \(storageSummary(config.storage)))"))
            return 0
        } catch {
            writeToStandardError("rosterd: configuration refused: \(LogText.escaped("\(error)"))\n")
            return 1
        }
    }

    /// `--backup PATH`: the database as the daemon would find it, copied and checked. It takes no `DatabaseLock`:
    /// it only reads, through SQLite's locking, so it is as safe beside a running daemon as `admin.backup`, and
    /// holding the lock would keep a daemon from starting while it runs.
    public static func backup(to target: String, _ options: DaemonOptions, environment: [String: String]) -> Int32 {
        func say(_ text: String) { writeToStandardError("rosterd: \(LogText.escaped(text))\n") }
        do {
            let config = try ConfigLoader.load(configPath: options.configPath)
            guard config.storage.backend == .sqlite else {
                say("--backup copies a SQLite database; with [Storage] Backend=postgresql, back up with pg_dump")
                return 1
            }
            let paths = try DaemonPaths.resolve(socketOption: options.socketPath, databaseOption: options.databasePath,
                                                configSocket: config.server.socketPath,
                                                configDatabase: config.server.databasePath,
                                                environment: environment, isRoot: getuid() == 0)
            guard access(paths.database, R_OK) == 0 else {
                say("no database at \(paths.database)")
                return 1
            }
            let summary = try DaemonStorage.backup(at: paths.database, to: target)
            print(LogText.escaped("backed up \(paths.database) to \(summary.path) (\(summary.pages) pages, \(summary.bytes) bytes)"))
            return 0
        } catch OfflineBackupError.refused(let refusal) {
            let why = MessageCatalog.message(for: .invalidParams(param: "path", problem: refusal.problem), locale: .en)
            say("backup to \(target) refused (\(refusal.rawValue)): \(why)")
            return 1
        } catch {
            say("backup failed: \(error)")
            return 1
        }
    }

    /// Serves until SIGTERM or SIGINT; 0 after a clean stop, 1 when it could not start.
    public static func serve(_ options: DaemonOptions, environment: [String: String]) -> Int32 {
        var logger = Logger(level: options.logLevel ?? .info, sink: LogDestination.sink(environment: environment))
        func fail(_ message: String) -> Int32 {
            logger.log(.err, "rosterd: \(message)")
            return 1
        }
        let config: DaemonConfig
        let paths: DaemonPaths
        let secrets: AccountSecrets
        let keyCheck: KeyCheck
        let keyFile: String
        let keyFileExisted: Bool
        do {
            config = try ConfigLoader.load(configPath: options.configPath)
            logger.level = options.logLevel ?? config.server.logLevel
            paths = try DaemonPaths.resolve(socketOption: options.socketPath, databaseOption: options.databasePath,
                                            configSocket: config.server.socketPath,
                                            configDatabase: config.server.databasePath,
                                            environment: environment, isRoot: getuid() == 0)
            // A database on PostgreSQL has no file here to make room for.
            if config.storage.backend == .sqlite {
                try DaemonPaths.createParentDirectories(of: paths.database, mode: 0o700)
            }
            // Refused with its path and reason when it is anything but our own 0600 file of 32 bytes.
            keyFile = DaemonPaths.keyFile(configured: config.storage.keyFilePath, database: paths.database)
            try DaemonPaths.createParentDirectories(of: keyFile, mode: 0o700)
            keyFileExisted = access(keyFile, F_OK) == 0
            let master = try KeyFile.loadOrCreate(at: keyFile)
            secrets = AccountSecrets(master: master)
            // The database keeps this of the key it was first served with, and refuses any other.
            let seal = secrets.totpSeal
            keyCheck = KeyCheck(value: master.checkValue, keyFile: keyFile,
                                opensSealed: { sealed in SecretBox.open(sealed, key: seal) != nil })
            if !keyFileExisted {
                // Every daemon sharing a PostgreSQL database needs this same file: say where it is, once.
                logger.notice("created the key file \(keyFile) for TOTP secrets and recovery codes; back it up "
                              + "with the database, and give every daemon that shares the database the same file")
            }
            DaemonPaths.raiseDescriptorLimit()
        } catch {
            return fail("\(error)")
        }
        let loop: EventLoop
        let storage: any Storage
        let server: Server
        let listener: UnixListener
        do {
            loop = try EventLoop(logger: logger)
            let cores = DaemonStorage.cores
            let clock = SystemWallClock()
            storage = try DaemonStorage.open(loop: loop, config: config, databasePath: paths.database, cores: cores,
                                             logger: logger, keyCheck: keyCheck, clock: clock)
            server = try Server.assembled(loop: loop, config: config, storage: storage, cores: cores, logger: logger,
                                      secrets: secrets, hostName: ProcessEnvironment.hostName, clock: clock)
            if let activated = SocketActivation.listener() {
                listener = activated
            } else {
                try DaemonPaths.createParentDirectories(of: paths.socket, mode: 0o750)
                listener = try UnixListener.bind(path: paths.socket)
            }
            try server.listen(on: listener)
        } catch {
            if !keyFileExisted, error.isKeyMismatch {
                // Made by this start and refused before it sealed anything: gone, so that the database's own key
                // file can be put in its place.
                unlink(keyFile)
                logger.notice("removed the key file \(keyFile) this start had made")
            }
            return fail("\(error)")
        }

        trustGateways(server)
        let notifier = SystemdNotifier()
        loop.onSignal = { signal in
            switch signal {
            case SIGTERM, SIGINT:
                server.logger.notice("rosterd: stopping on \(signal == SIGTERM ? "SIGTERM" : "SIGINT")")
                notifier.stopping()
                server.shutdown(gracePeriod: .milliseconds(4_500)) { loop.stop() }
            case SIGHUP:
                reload(server, loop: loop, options: options, notifier: notifier)
            default:
                server.logger.notice("rosterd: ignoring signal \(signal)")
            }
        }
        let database = config.storage.backend == .sqlite
            ? paths.database : Conninfo.masked(config.storage.postgresqlConnection)
        logger.notice("rosterd \(RosterVersion.version) listening on \(listener.path) (preset \(config.policy.preset.rawValue), "
                      + "\(storageSummary(config.storage)))",
                      [("ROSTER_SOCKET", listener.path), ("ROSTER_DATABASE", database), ("ROSTER_EVENT", "started")])
        notifier.ready()
        server.warmUp()
        server.startHousekeeping(notifier: notifier)
        defer { loop.onSignal = nil }
        do {
            try loop.run()
        } catch {
            return fail("event loop failed: \(error)")
        }
        // Only a daemon that gets here leaves the mark of a clean shutdown; one that dies never does.
        storage.finish()
        server.logger.notice("rosterd: stopped", [("ROSTER_EVENT", "stopped")])
        return 0
    }

    /// The backend in force, as a log line may show it: a PostgreSQL connection string without its password.
    static func storageSummary(_ storage: StorageSettings) -> String {
        switch storage.backend {
        case .sqlite: "storage sqlite"
        case .postgresql:
            "storage postgresql '\(Conninfo.masked(storage.postgresqlConnection))' with \(storage.postgresqlConnections) connection(s)"
        }
    }

    /// Looks `[Server] GatewayUsers=` up in the user database and hands the server the uids, saying which are trusted.
    private static func trustGateways(_ server: Server) {
        let (uids, unknown) = GatewayUIDs.resolve(server.config.server.gatewayUsers)
        server.gatewayUIDs = uids
        server.logger.info(GatewayUIDs.summary(trusted: uids, daemonUID: getuid(), unknown: unknown),
                           [("ROSTER_EVENT", "gateways")])
    }

    /// SIGHUP: a good file replaces the config in force, a bad one is refused and the old one stays.
    private static func reload(_ server: Server, loop: EventLoop, options: DaemonOptions, notifier: SystemdNotifier) {
        notifier.reloading(monotonicMicroseconds: loop.now.nanoseconds / 1_000)
        do {
            let (fresh, kept) = server.config.reloaded(from: try ConfigLoader.load(configPath: options.configPath))
            server.config = fresh
            server.logger.level = options.logLevel ?? fresh.server.logLevel
            trustGateways(server)
            for key in kept {
                server.logger.warning("rosterd: \(key) changed; it needs a restart, keeping \(storageSummary(fresh.storage))",
                                      [("ROSTER_EVENT", "reload_kept")])
            }
            server.logger.notice("rosterd: configuration reloaded (preset \(fresh.policy.preset.rawValue))",
                                 [("ROSTER_EVENT", "reloaded")])
        } catch {
            server.logger.log(.err, "rosterd: reload refused, keeping the configuration in force: \(error)")
        }
        notifier.ready()
    }
}
