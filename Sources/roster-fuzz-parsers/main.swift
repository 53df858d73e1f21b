// roster-fuzz-parsers: one libFuzzer target per parser of outside data, each fed straight into its parser so it
// runs at parser speed. Built with `swift build --sanitize=fuzzer --product roster-fuzz-parsers` (see `make fuzz`);
// `ROSTER_FUZZ_TARGET` names the parser (vcard, csv, json, framer, ini, conninfo, remote, base32, notify, mail, webauthn, card);
// its corpus is `Fuzz/corpus/<name>/`. libFuzzer brings its own main, so this file holds declarations only; the plain build
// links to a program that does nothing. To reproduce a crash, run the fuzzer binary with the same variable on it.

import Glibc
import RosterFuzzTargets

/// The parser this process drives, read once from the environment; a missing or unknown name stops at once.
let target: ParserTarget = {
    let names = ParserTarget.allCases.map(\.rawValue).joined(separator: ", ")
    guard let raw = getenv("ROSTER_FUZZ_TARGET") else {
        say("roster-fuzz-parsers: set ROSTER_FUZZ_TARGET to one of: \(names)")
        exit(2)
    }
    guard let target = ParserTarget(rawValue: String(cString: raw)) else {
        say("roster-fuzz-parsers: unknown ROSTER_FUZZ_TARGET '\(String(cString: raw))'; one of: \(names)")
        exit(2)
    }
    return target
}()

/// One line on standard error (fd 2: Glibc's `stderr` is shared mutable state to Swift 6).
func say(_ text: String) {
    let line = Array((text + "\n").utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let broken = target.run(Array(UnsafeBufferPointer(start: data, count: size)))
    guard broken.isEmpty else {
        // A broken property is kept by libFuzzer as a crash, like a trap inside the parser.
        say("roster-fuzz-parsers \(target.rawValue): " + broken.joined(separator: "; "))
        abort()
    }
    return 0
}
