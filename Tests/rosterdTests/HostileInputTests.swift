import Glibc
import RosterProtocol
import Testing

/// Input and connection limits (protocol.md §Limits) hold against hostile or clumsy peers.
@Suite("Hostile input and connection limits", .serialized)
struct HostileInputTests {
    private static let script = [
        "{\"id\":1,\"method\":\"session.hello\",\"params\":{\"locale\":\"ko\"}}",
        "{\"id\":2,\"method\":\"session.whoami\"}",
        "not json at all",
        "{\"id\":\"x\",\"method\":\"users.check_username\",\"params\":{\"username\":\"김수현abc\"}}",
        "{\"id\":3,\"method\":\"nope\"}",
        "{\"id\":4,\"method\":\"rpc.describe\"}",
    ].map { $0 + "\n" }.joined()

    private func answers(_ client: TestClient, count: Int) throws -> [String] {
        try (0..<count).map { _ in try client.readRawLine() ?? "" }
    }

    @Test func everySplitOfTheSameRequestsGivesByteIdenticalAnswers() throws {
        let daemon = try TestDaemon()
        let whole = try daemon.connect()
        try whole.send(Self.script)
        let expected = try answers(whole, count: 6)
        let bytes = Array(Self.script.utf8)
        for size in 1...143 {
            let client = try daemon.connect()
            var offset = 0
            while offset < bytes.count {
                let end = min(offset + size, bytes.count)
                try client.send(Array(bytes[offset..<end]))
                offset = end
            }
            #expect(try answers(client, count: 6) == expected, "split into \(size)-byte writes")
        }
    }

    @Test func garbageNulAndInvalidUTF8EachGetAnErrorAndTheConnectionGoesOn() throws {
        let daemon = try TestDaemon()
        let client = try daemon.connect()
        let hostile: [[UInt8]] = [
            Array("\u{1}\u{2}garbage\u{7f}".utf8),
            [0x7B, 0x00, 0x7D],
            [0x00, 0x00, 0x00],
            Array("{\"id\":1,\"method\":\"session.hello\",\"params\":{\"client\":\"".utf8) + [0xC3, 0x28] + Array("\"}}".utf8),
            [0xFF, 0xFE, 0xFD],
            Array("{\"id\":2,\"method\":\"session.hello\",\"params\":{\"client\":\"\\ud800\"}}".utf8),
        ]
        for line in hostile {
            try client.send(line + [0x0A])
            let answer = try client.readLine()
            #expect(answer["error"]?["code"] == -32700, "\(line)")
            #expect(answer["id"] == .null)
        }
        #expect(try client.call("session.whoami")["result"] == ["user": nil])
    }

    @Test func aMebibyteWithoutNewlineIsAnsweredAtTheLimitAndMemoryStaysBounded() throws {
        let daemon = try TestDaemon()
        let client = try daemon.connect()
        let before = residentKiB(daemon.pid)
        try client.send([UInt8](repeating: UInt8(ascii: "{"), count: 65_537))
        #expect(try client.readLine()["error"]?["data"]?["reason"] == "request_too_large")
        for _ in 0..<64 { try client.send([UInt8](repeating: UInt8(ascii: "a"), count: 1 << 20)) }
        try client.send("\n{\"id\":9,\"method\":\"session.whoami\"}\n")
        #expect(try client.readLine()["id"] == 9)
        // 64 MiB went through; the daemon held at most one line's worth of it.
        #expect(residentKiB(daemon.pid) - before < 16 * 1024)
    }

    @Test func connectionLimitsPerUidAndInTotal() throws {
        let daemon = try TestDaemon(config: "[Server]\nMaxConnections=6\nMaxConnectionsPerUser=3\n")
        chmod(daemon.directory.path, 0o755)
        chmod(daemon.directory.path + "/run", 0o755)
        chmod(daemon.socketPath, 0o666)
        var mine = [try daemon.connect()]
        // The harness's readiness probe is closed asynchronously; wait until only this client is counted.
        for _ in 0..<200 where try mine[0].call("admin.stats")["result"]?["connections"] != 1 { usleep(10_000) }
        for _ in 0..<2 { mine.append(try daemon.connect()) }
        for client in mine { #expect(try client.call("session.whoami")["result"] != nil) }
        let excess = try daemon.connect()
        let refusal = try excess.readLine()
        #expect(refusal["error"]?["data"]?["reason"] == "busy")
        #expect(try excess.readsEndOfStream())
        // Another uid still gets in.
        let request = daemon.directory.path + "/request.json"
        try writeFile(request, "{\"id\":1,\"method\":\"session.whoami\"}\n")
        let other = try capture(["/bin/sh", "-c",
                                 "setpriv --reuid=65534 --regid=65534 --clear-groups socat -t 2 - UNIX-CONNECT:\(daemon.socketPath) < \(request)"],
                                in: daemon.directory)
        #expect(other.stdout.contains("\"result\":{\"user\":null}"), "\(other)")
        mine.removeLast().close()
        // The daemon learns of the close asynchronously; a slot frees up as soon as it does.
        var admitted = false
        for _ in 0..<200 where !admitted {
            let client = try daemon.connect()
            admitted = (try? client.call("session.whoami")["result"]) != nil
            if !admitted { usleep(10_000) }
        }
        #expect(admitted)
    }
}

/// The resident set of a process in KiB, from /proc.
func residentKiB(_ pid: pid_t) -> Int {
    guard let status = try? readFile("/proc/\(pid)/status") else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
    return 0
}
