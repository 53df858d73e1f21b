import Foundation
import Glibc
import RosterProtocol
import Testing

/// `busy` is the daemon's "not now, nothing done": rosterctl waits the time it names and asks again.
@Suite("rosterctl retries busy")
struct RosterctlBusyRetryTests {
    /// With one job per user, a long import of the same user on another connection makes the daemon refuse
    /// rosterctl's import with `busy` until it is done; rosterctl must wait, not give up.
    @Test func anImportRefusedBusyIsSentAgainAndKept() throws {
        let ctl = try Rosterctl(TestDaemon(config: "[Server]\nMaxQueuedJobsPerUser=1\n"))
        try ctl.registerAndLogIn("alice12")
        let token = try readFile(ctl.sessionPath).trimmingCharacters(in: .whitespacesAndNewlines)
        let other = try TestClient(path: ctl.daemon.socketPath, timeoutSeconds: 60)
        defer { other.close() }
        _ = try other.call("session.resume", ["token": .string(token)])
        // Han names cost a reading each (about 0.1 ms), so this import holds the user's one job for a while.
        let rows = (0..<3_000).map { "张\(String(repeating: "三", count: 1 + $0 % 3))\($0)" }
        // Sent first, so it holds the user's one job when rosterctl's import arrives; its answer is not awaited.
        let data = "name\\r\\n" + rows.joined(separator: "\\r\\n") + "\\r\\n"
        try other.send("{\"id\":9,\"method\":\"contacts.import\",\"params\":{\"format\":\"csv\",\"data\":\"\(data)\"}}\n")
        let small = try ctl.run(["--locale", "en", "contacts", "import", "-", "--format", "csv"],
                                input: "name\r\nBob Jones\r\n")
        #expect(small.status == 0, "\(small.stderr)")
        #expect(small.stdout == "added 1, skipped 0, rejected 0\n")
        let listed = try ctl.run(["--json", "contacts", "search", "Bob Jones"])
        #expect(listed.stdout.contains("\"total\":1"))
    }
}
