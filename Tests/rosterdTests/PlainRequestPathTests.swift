import Glibc
import RosterProtocol
import Testing

/// The fast lane for plain `users.check_username` lines must answer exactly as the general path does, and the
/// in-memory username directory must agree with the database at every moment.
@Suite("Plain check_username and the username directory", .serialized)
struct PlainRequestPathTests {
    /// The answer's bytes after the id, for one request line.
    private func tail(of line: String, on client: TestClient) throws -> String {
        try client.send(line + "\n")
        guard let answer = try client.readRawLine() else { throw HarnessError(description: "connection closed") }
        guard let cut = answer.range(of: #","result":"#) ?? answer.range(of: #","error":"#) else {
            throw HarnessError(description: "not an answer: \(answer)")
        }
        return String(answer[cut.lowerBound...])
    }

    @Test func plainAndGeneralShapesAnswerByteForByteAlike() throws {
        let daemon = try TestDaemon()
        defer { daemon.stop() }
        let client = try daemon.connect()
        _ = try client.call("users.register", ["username": "takenname", "password": "secret-pass-1"])
        for locale in ["zh-Hans", "en", "vi", "ko"] {
            _ = try client.call("session.hello", ["locale": .string(locale)])
            for name in ["takenname", "TakenName", "freename1", "abc", "", "bad name", "x!y!zzz",
                         String(repeating: "n", count: 65)] {
                // The scanner takes the first; an escaped character sends the second down the general path.
                let plain = #"{"jsonrpc":"2.0","id":5,"method":"users.check_username","params":{"username":"\#(name)"}}"#
                let escaped = name.isEmpty ? #""# : #"\u00"# + String(name.utf8.first ?? 0, radix: 16) + name.dropFirst()
                let general = #"{"id":5,"params":{"username":"\#(escaped)"},"method":"users.check_username"}"#
                let fast = try tail(of: plain, on: client)
                #expect(fast == (try tail(of: general, on: client)), "\(name) in \(locale)")
                #expect(fast.contains(#""code":""#))
            }
        }
        // Ids come back exactly as sent, in both shapes.
        try client.send(#"{"id":"req-9","method":"users.check_username","params":{"username":"abcdef"}}"# + "\n")
        #expect(try client.readRawLine()?.hasPrefix(#"{"jsonrpc":"2.0","id":"req-9","result":"#) == true)
        try client.send(#"{"id":-0,"method":"users.check_username","params":{"username":"abcdef"}}"# + "\n")
        #expect(try client.readRawLine()?.hasPrefix(#"{"jsonrpc":"2.0","id":-0,"result":"#) == true)
    }

    @Test func aReloadChangesThePlainAnswersToo() throws {
        let directory = try TemporaryDirectory()
        let daemon = try TestDaemon(directory: directory, config: "[Validation]\nUsernameMinLength=6\n")
        defer { daemon.stop() }
        let client = try daemon.connect()
        #expect(try client.call("users.check_username", ["username": "abcd"])["result"]?["code"] == "too_short")
        try writeFile(directory.path + "/rosterd.conf", "[Validation]\nUsernameMinLength=3\n")
        daemon.signal(SIGHUP)
        #expect(daemon.waitForLog("configuration reloaded"))
        #expect(try client.call("users.check_username", ["username": "abcd"])["result"]?["code"] == "available")
        #expect(try client.call("users.check_username", ["username": "ab"])["result"]?["message"]?.stringValue?
            .contains("3") == true)
    }

    @Test func theDirectoryFillsAfterStartAndFollowsRegistrations() throws {
        let directory = try TemporaryDirectory()
        var daemon = try TestDaemon(directory: directory)
        let client = try daemon.connect()
        for index in 0..<20 {
            _ = try client.call("users.register", ["username": .string("member\(index)"), "password": "secret-pass-1"])
        }
        daemon.stop()
        daemon = try TestDaemon(directory: directory)
        defer { daemon.stop() }
        let admin = try daemon.connect()
        var phase = ""
        for _ in 0..<500 where phase != "ready" {
            phase = try admin.call("admin.stats")["result"]?["username_directory"]?.stringValue ?? ""
            if phase != "ready" { usleep(10_000) }
        }
        #expect(phase == "ready")
        #expect(try admin.call("admin.stats")["result"]?["users"] == 20)
        #expect(try admin.call("users.check_username", ["username": "member7"])["result"]?["code"] == "taken")
        #expect(try admin.call("users.check_username", ["username": "MEMBER7"])["result"]?["code"] == "taken")
        #expect(try admin.call("users.check_username", ["username": "member20"])["result"]?["code"] == "available")
        _ = try admin.call("users.register", ["username": "member20", "password": "secret-pass-1"])
        #expect(try admin.call("users.check_username", ["username": "member20"])["result"]?["code"] == "taken")
        #expect(try admin.call("admin.stats")["result"]?["users"] == 21)
        // A form's live check reads the same directory.
        _ = try admin.call("session.hello", ["timing": ["debounce_ms": 0]])
        _ = try admin.call("form.open", ["form": "register"])
        _ = try admin.call("form.input", ["form": "register", "field": "username", "value": "member20"])
        #expect(try admin.waitForField("username", state: "invalid")["code"] == "taken")
    }

    /// The storm fix: hashing workers rest under SCHED_IDLE, so the loop always preempts them; every other
    /// thread (the loop, the pool's watchdog) keeps the daemon's own policy.
    @Test func hashingWorkersRunAtIdlePriority() throws {
        let daemon = try TestDaemon()
        defer { daemon.stop() }
        let stats = try daemon.connect().call("admin.stats")["result"]
        let workers = stats?["hash_workers"]?.int64Value ?? 0
        #expect(stats?["hash_raised"] == 0)
        // libpwquality has a lane of its own, one thread, which is not among the idle ones below.
        #expect(stats?["queues"]?["checks"]?["workers"] == 1)
        var policies: [String: String] = [:]
        let tasks = try capture(["/bin/ls", "/proc/\(daemon.pid)/task"], in: daemon.directory).stdout
        for tid in tasks.split(separator: "\n") {
            let sched = try readFile("/proc/\(daemon.pid)/task/\(tid)/sched")
            let policy = sched.split(separator: "\n").first { $0.hasPrefix("policy") }?.split(separator: " ").last
            policies[String(tid)] = policy.map(String.init) ?? "?"
        }
        #expect(policies.values.filter { $0 == "5" }.count == Int(workers))
        #expect(policies[String(daemon.pid)] == "0")
    }
}
