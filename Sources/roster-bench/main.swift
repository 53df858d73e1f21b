import CRosterFloor
import Glibc

// roster-bench: measure rosterd beside the C floor (docs/BENCHMARKS.md). `--serve-floor PATH` is the floor's own
// process, started by the benchmark itself.

signal(SIGPIPE, SIG_IGN)

let options: BenchOptions
do {
    options = try BenchOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    writeError("\(error)\n")
    exit(2)
}

if options.spin {
    var turns: UInt64 = 0
    while true {
        turns &+= 1
        if turns == 0 { writeError("") }
    }
}

if let once = options.parseOnce {
    let result = ParseInput.parse(once.format, ParseInput.text(once.format, bytes: once.bytes))
    exit(result.contacts.count + result.errors.count == 1 ? 0 : 1)
}

if let path = options.serveFloor {
    _ = roster_floor_serve(path)
    writeError("roster-bench: the floor could not serve \(path): \(String(cString: strerror(errno)))\n")
    exit(1)
}

do {
    let suite = try Suite(options: options)
    defer { suite.finish() }
    try suite.run()
    print(options.json ? suite.report.json() : suite.report.table())
} catch {
    writeError("roster-bench: \(error)\n")
    exit(1)
}

func writeError(_ text: String) {
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}
