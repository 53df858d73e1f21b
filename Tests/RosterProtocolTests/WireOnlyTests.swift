import RosterTestSupport
import Testing

/// RosterProtocol is the wire and nothing else: it reads no file and no environment. Whoever needs those goes
/// through RosterHostIO, so the code both ends share stays testable with bytes alone.
@Suite("RosterProtocol is wire only")
struct WireOnlyTests {
    /// Names that reach a file or the environment; `memchr` and building a `sockaddr_un` are not among them.
    private static let hostNames: Set<String> = [
        "open", "fopen", "opendir", "readdir", "stat", "lstat", "access", "unlink", "mkdir", "rename", "realpath",
        "fread", "fwrite", "getenv", "setenv", "environ", "ProcessInfo", "FileManager",
    ]

    @Test func noSourceReadsAFileOrTheEnvironment() {
        let files = SourceTree().swiftFiles(under: "Sources/RosterProtocol")
        #expect(files.count > 5, "found no RosterProtocol sources under \(SourceTree().root)")
        for file in files {
            let used = SourceTree.identifiers(in: file.text).intersection(Self.hostNames)
            #expect(used.isEmpty, "\(file.path) uses \(used.sorted())")
            #expect(!file.text.contains("Glibc.read(") && !file.text.contains("Glibc.write("),
                    "\(file.path) reads or writes a file")
        }
    }
}
