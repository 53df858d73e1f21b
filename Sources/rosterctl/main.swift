import Glibc
import RosterClient
import RosterProtocol

// rosterctl: global options, then a verb from the table.

signal(SIGPIPE, SIG_IGN)

let helpText = """
    rosterctl [OPTIONS...] COMMAND ...

    Talk to rosterd, the Roster account and contacts daemon.

    Commands:
      \(CallVerb.usage.padding(30)) \(CallVerb.summary)

    Options:
      -h --help                      Show this help
         --version                   Show the version
         --socket PATH               Talk to the daemon on PATH (default: $ROSTER_SOCKET,
                                     else /run/roster/roster.sock as root, else
                                     $XDG_RUNTIME_DIR/roster/roster.sock)
         --json=short|pretty         Print answers as JSON

    Exit status: 0 success, 1 failure, 2 usage error.
    """

let options: GlobalOptions
let words: [String]
do {
    (options, words) = try parseCommandLine(Array(CommandLine.arguments.dropFirst()))
} catch {
    writeError("rosterctl: \(error)")
    exit(2)
}
if options.showHelp {
    print(helpText)
    exit(0)
}
if options.showVersion {
    print("rosterctl \(RosterVersion.version) (protocol \(RosterVersion.wireProtocol))")
    exit(0)
}
guard let verb = words.first else {
    writeError("rosterctl: no command given; see rosterctl --help")
    exit(2)
}

let environment = ProcessEnvironment.current
guard let socketPath = options.socketPath ?? SocketLocation.defaultPath(environment: environment, isRoot: getuid() == 0) else {
    writeError("rosterctl: XDG_RUNTIME_DIR is not set; pass --socket PATH or set ROSTER_SOCKET")
    exit(1)
}

do {
    switch verb {
    case "call":
        let call = try CallVerb(arguments: Array(words.dropFirst()))
        let connection = try ClientConnection(socketPath: socketPath)
        exit(try call.run(connection, options: options))
    default:
        writeError("rosterctl: unknown command '\(verb)'; see rosterctl --help")
        exit(2)
    }
} catch let error as UsageError {
    writeError("rosterctl: \(error)")
    exit(2)
} catch {
    writeError("rosterctl: \(error)")
    exit(1)
}
