import Glibc
import RosterCore
import RosterProtocol
import RosterServer

// rosterd: parse options, load the config, choose paths, listen, tell systemd, serve until SIGTERM/SIGINT.

signal(SIGPIPE, SIG_IGN)

let options: DaemonOptions
do {
    options = try DaemonOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    writeToStandardError("rosterd: \(error)\n")
    exit(2)
}
switch options.mode {
case .help:
    print(DaemonOptions.helpText)
    exit(0)
case .version:
    print("\(RosterVersion.server) \(RosterVersion.version) (protocol \(RosterVersion.wireProtocol))")
    exit(0)
case .serve:
    break
}

let environment = ProcessEnvironment.current
let underSystemd = environment["JOURNAL_STREAM"] != nil || environment["INVOCATION_ID"] != nil
var logger = Logger(level: options.logLevel ?? .info, sink: StderrSink(priorityPrefix: underSystemd))

@MainActor func fail(_ message: String) -> Never {
    logger.log(.err, "rosterd: \(message)")
    exit(1)
}

var config: DaemonConfig
do {
    config = try ConfigLoader.load(configPath: options.configPath)
} catch {
    fail("refusing the configuration: \(error)")
}
logger.level = options.logLevel ?? config.server.logLevel

let paths: DaemonPaths
do {
    paths = try DaemonPaths.resolve(socketOption: options.socketPath, databaseOption: options.databasePath,
                                    configSocket: config.server.socketPath, configDatabase: config.server.databasePath,
                                    environment: environment, isRoot: getuid() == 0)
    try DaemonPaths.createParentDirectories(of: paths.socket, mode: 0o750)
    try DaemonPaths.createParentDirectories(of: paths.database, mode: 0o700)
    DaemonPaths.raiseDescriptorLimit()
} catch {
    fail("\(error)")
}

let loop: EventLoop
let listener: UnixListener
do {
    loop = try EventLoop()
    listener = try UnixListener.bind(path: paths.socket)
} catch {
    fail("\(error)")
}

let server: Server
do {
    server = try Server.open(loop: loop, config: config, databasePath: paths.database, logger: logger)
    try server.listen(on: listener)
} catch {
    listener.close()
    fail("\(error)")
}

let notifier = SystemdNotifier()
loop.onSignal = { signal in
    switch signal {
    case SIGTERM, SIGINT:
        logger.notice("rosterd: stopping on \(signal == SIGTERM ? "SIGTERM" : "SIGINT")")
        notifier.stopping()
        server.shutdown(gracePeriod: .milliseconds(4_500)) { loop.stop() }
    case SIGHUP:
        notifier.reloading(monotonicMicroseconds: loop.now.nanoseconds / 1_000)
        do {
            let fresh = try ConfigLoader.load(configPath: options.configPath)
            server.config = fresh
            logger.level = options.logLevel ?? fresh.server.logLevel
            server.logger = logger
            logger.notice("rosterd: configuration reloaded (preset \(fresh.policy.preset.rawValue))")
        } catch {
            logger.log(.err, "rosterd: reload refused, keeping the configuration in force: \(error)")
        }
        notifier.ready()
    default:
        logger.notice("rosterd: ignoring signal \(signal)")
    }
}

logger.notice("rosterd \(RosterVersion.version) listening on \(paths.socket) (preset \(config.policy.preset.rawValue))",
              [("ROSTER_SOCKET", paths.socket), ("ROSTER_DATABASE", paths.database)])
notifier.ready(status: "Listening on \(paths.socket)")

do {
    try loop.run()
} catch {
    fail("event loop failed: \(error)")
}
logger.notice("rosterd: stopped")
exit(0)
