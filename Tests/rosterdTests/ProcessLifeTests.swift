import CLinux
import Glibc
import RosterProtocol
import Testing

/// Start-up, readiness, signals and the socket file, as systemd and an administrator see them.
@Suite("rosterd process life", .serialized)
struct ProcessLifeTests {
    @Test func versionAndHelpExitZero() throws {
        #expect(run([TestDaemon.binary, "--version"]) == 0)
        #expect(run([TestDaemon.binary, "--help"]) == 0)
        #expect(run([TestDaemon.binary, "--no-such-option"]) == 2)
    }

    @Test func sigtermExitsZeroAndRemovesTheSocket() throws {
        let daemon = try TestDaemon()
        var info = stat()
        #expect(stat(daemon.socketPath, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o660)
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeoutMs: 5_000) == 0)
        #expect(access(daemon.socketPath, F_OK) != 0)
        #expect(daemon.waitForLog("stopping on SIGTERM"))
    }

    @Test func sigintAlsoStopsCleanly() throws {
        let daemon = try TestDaemon()
        daemon.signal(SIGINT)
        #expect(daemon.waitForExit(timeoutMs: 5_000) == 0)
        #expect(access(daemon.socketPath, F_OK) != 0)
    }

    @Test func aStaleSocketIsReplacedButALiveOneIsNot() throws {
        let first = try TestDaemon()
        // Its own database: on the same one the database lock would refuse it first (StorageSafetyTests).
        let second = try TestDaemon(arguments: ["--database", first.directory.path + "/state/second.db"],
                                    directory: first.directory, waitUntilReady: false)
        #expect(second.waitForExit(timeoutMs: 5_000) == 1)
        #expect(second.waitForLog("already listening"))
        #expect(try first.connect().call("session.whoami")["result"] != nil)
        first.signal(SIGKILL)
        _ = first.waitForExit()
        #expect(access(first.socketPath, F_OK) == 0)
        let third = try TestDaemon(directory: first.directory)
        #expect(try third.connect().call("session.whoami")["result"] != nil)
    }

    @Test func readyAndStoppingReachTheNotifySocket() throws {
        let directory = try TemporaryDirectory()
        let notify = try NotifySocket(in: directory)
        let daemon = try TestDaemon(environment: ["NOTIFY_SOCKET": notify.path], directory: directory, waitUntilReady: false)
        #expect(notify.next(containing: "READY=1").contains("READY=1"))
        #expect(notify.next(containing: "STATUS=").contains("STATUS=Serving 0 connection(s)"))
        // READY=1 promises that connections are accepted from now on.
        #expect(try daemon.connect().call("session.whoami")["result"] != nil)
        daemon.signal(SIGTERM)
        #expect(notify.next(containing: "STOPPING=1").contains("STOPPING=1"))
        let received = notify.received
        #expect(received.firstIndex { $0.contains("READY=1") } ?? 99 < received.firstIndex { $0.contains("STOPPING=1") } ?? -1)
        #expect(daemon.waitForExit(timeoutMs: 5_000) == 0)
    }

    @Test func sigtermFinishesAnswersToRequestsAlreadySent() throws {
        let daemon = try TestDaemon()
        let client = try daemon.connect()
        var batch = ""
        for id in 1...50 { batch += "{\"id\":\(id),\"method\":\"rpc.describe\"}\n" }
        try client.send(batch)
        #expect(try client.readLine()["id"] == 1)
        daemon.signal(SIGTERM)
        for id in 2...50 { #expect(try client.readLine()["id"]?.int64Value == Int64(id)) }
        #expect(daemon.waitForExit(timeoutMs: 5_000) == 0)
    }
}
