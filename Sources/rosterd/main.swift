import Glibc
import RosterHostIO
import RosterProtocol
import RosterRuntime

// rosterd: parse options, then check the config, back up, copy a database, or serve until SIGTERM/SIGINT.

signal(SIGPIPE, SIG_IGN)
// A file-size limit must fail the write (and answer storage_full), not kill the daemon.
signal(SIGXFSZ, SIG_IGN)

let options: DaemonOptions
do {
    options = try DaemonOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    writeToStandardError("rosterd: \(LogText.escaped("\(error)"))\n")
    exit(2)
}

switch options.mode {
case .help:
    print(DaemonOptions.helpText)
    exit(0)
case .version:
    print("\(RosterVersion.server) \(RosterVersion.version) (protocol \(RosterVersion.wireProtocol))")
    exit(0)
case .checkConfig:
    exit(Daemon.checkConfig(options))
case .backup(let path):
    exit(Daemon.backup(to: path, options, environment: ProcessEnvironment.current))
case .copyDatabase(let from, let to):
    exit(Daemon.copyDatabase(from: from, to: to))
case .serve:
    exit(Daemon.serve(options, environment: ProcessEnvironment.current))
}
