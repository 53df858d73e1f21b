import Glibc
import RosterClient
import RosterHostIO
import RosterProtocol

// rosterctl: global options, then a verb from the table. Exit 0 ok, 1 failure, 2 usage, 130 interrupted.

signal(SIGPIPE, SIG_IGN)

let options: GlobalOptions
let words: [String]
do {
    (options, words) = try parseCommandLine(Array(CommandLine.arguments.dropFirst()))
} catch {
    writeError("rosterctl: \(error)")
    exit(2)
}
if options.showVersion {
    print("rosterctl \(RosterVersion.version) (protocol \(RosterVersion.wireProtocol))")
    exit(0)
}
if options.showHelp {
    print(words.first.flatMap(findVerb).map { verbHelpText($0.configuration) } ?? helpText())
    exit(0)
}
guard let name = words.first else {
    writeError("rosterctl: no command given; see rosterctl --help")
    exit(2)
}
guard let verbType = findVerb(name) else {
    writeError("rosterctl: unknown command '\(name)'; see rosterctl --help")
    exit(2)
}

let context = VerbContext(options: options, environment: ProcessEnvironment.current)
do {
    let verb = try verbType.init(arguments: Array(words.dropFirst()))
    try verb.validate(context)
    let status = try verb.run(context)
    fflush(nil)
    exit(status)
} catch let error as UsageError {
    writeError("rosterctl: \(error)")
    exit(2)
} catch let error as CommandFailure {
    writeError("rosterctl: \(error)")
    exit(error.status)
} catch {
    writeError("rosterctl: \(error)")
    exit(1)
}
