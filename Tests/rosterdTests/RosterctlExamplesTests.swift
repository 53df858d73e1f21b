import Glibc
import RosterProtocol
import Testing

/// examples/ run against the real daemon, so what protocol.md points integrators at never rots.
@Suite("examples against rosterd", .serialized)
struct RosterctlExamplesTests {
    /// The repository's root, found from this file's path (Tests/rosterdTests/ThisFile.swift).
    private static let root = String(#filePath).split(separator: "/", omittingEmptySubsequences: false).dropLast(3).joined(separator: "/")

    private func runExample(_ argv: [String], daemon: TestDaemon) throws -> (status: Int32, stdout: String, stderr: String) {
        try capture(argv, environment: ["PATH=/usr/bin:/bin", "ROSTER_SOCKET=\(daemon.socketPath)"], in: daemon.directory)
    }

    @Test func thePythonClientStreamsEventsAsAnIterator() throws {
        let daemon = try TestDaemon()
        let result = try runExample(["/usr/bin/python3", Self.root + "/examples/python/roster_client.py", daemon.socketPath, "abc"],
                                    daemon: daemon)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("connected to rosterd 0.1.0\n"))
        #expect(result.stdout.contains("\"code\": \"too_short\""))
        #expect(result.stdout.hasSuffix("error: method_not_found\n"))
    }

    @Test func theShellOneLinersTalkThroughSocat() throws {
        let daemon = try TestDaemon()
        let shell = Self.root + "/examples/shell/"
        let hello = try runExample(["/bin/sh", shell + "hello.sh"], daemon: daemon)
        #expect(hello.status == 0)
        #expect(try JSONParser.parse(Array(hello.stdout.utf8.dropLast()))["result"]?["locale"] == "en")
        let check = try runExample(["/bin/sh", shell + "check-username.sh", "abc"], daemon: daemon)
        #expect(check.stdout == "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"state\":\"invalid\",\"code\":\"too_short\",\"message\":\"用户名长度至少为6位\"}}\n")
        let form = try runExample(["/bin/sh", shell + "register-form.sh", "alice1"], daemon: daemon)
        #expect(form.stdout.contains("\"code\":\"available\""))
        let stats = try runExample(["/bin/sh", shell + "stats.sh"], daemon: daemon)
        #expect(stats.status == 0)
        #expect(stats.stdout.contains("\"uptime_ms\""))
    }

    @Test func everyShellExampleIsCoveredHere() throws {
        // A new example must be added to the test above; this catches one that was not.
        let directory = opendir(Self.root + "/examples/shell")
        defer { if let directory { closedir(directory) } }
        var names: [String] = []
        while let directory, let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            if name.hasSuffix(".sh") { names.append(name) }
        }
        #expect(names.sorted() == ["check-username.sh", "hello.sh", "register-form.sh", "stats.sh"])
    }
}
