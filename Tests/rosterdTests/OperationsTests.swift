import Glibc
import RosterProtocol
import RosterSQLite
import Testing

/// What an administrator does with rosterd: check and reload the config, back up, activate by socket.
@Suite("rosterd operations", .serialized)
struct OperationsTests {
    @Test func checkConfigJudgesTheFilesWithoutStarting() throws {
        let directory = try TemporaryDirectory()
        let good = directory.path + "/good.conf"
        let bad = directory.path + "/bad.conf"
        try writeFile(good, "[Timing]\nDebounceMs=250\n")
        try writeFile(bad, "[Timing]\n\nDebounceMs=soon\n")
        let accepted = try capture([TestDaemon.binary, "--config", good, "--check-config"], in: directory)
        #expect(accepted.status == 0)
        let refused = try capture([TestDaemon.binary, "--config", bad, "--check-config"], in: directory)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("\(bad):3:"))
        #expect(refused.stderr.contains("DebounceMs="))
        #expect(try capture([TestDaemon.binary, "--config", directory.path + "/missing.conf", "--check-config"],
                            in: directory).status == 1)
    }

    @Test func aBadConfigKeepsTheDaemonFromStarting() throws {
        let directory = try TemporaryDirectory()
        let daemon = try TestDaemon(directory: directory, config: "[Login]\nRateLimitBurst=0\n", waitUntilReady: false)
        #expect(daemon.waitForExit() == 1)
        #expect(daemon.stderr.contains("rosterd.conf:2:"))
    }

    @Test func sighupReloadsAGoodFileAndRefusesABadOne() throws {
        let directory = try TemporaryDirectory()
        let notify = try NotifySocket(in: directory)
        let daemon = try TestDaemon(environment: ["NOTIFY_SOCKET": notify.path], directory: directory,
                                    config: "[Timing]\nDebounceMs=500\n")
        _ = notify.next(containing: "READY=1")
        let client = try daemon.connect()
        _ = try client.call("form.open", ["form": "register"])

        try writeFile(directory.path + "/rosterd.conf", "[Timing]\nDebounceMs=120\n")
        daemon.signal(SIGHUP)
        let reloading = notify.next(containing: "RELOADING=1")
        #expect(reloading.contains("MONOTONIC_USEC="))
        #expect(notify.next(containing: "READY=1").contains("READY=1"))
        #expect(try daemon.connect().call("session.hello")["result"]?["timing"]?["debounce_ms"] == 120)
        #expect(try client.call("users.check_username", ["username": "abcd"])["result"]?["code"] == "too_short")

        try writeFile(directory.path + "/rosterd.conf", "[Timing]\nDebounceMs=120\n[Validation]\nUsernameMinLength=4\n")
        daemon.signal(SIGHUP)
        _ = notify.next(containing: "RELOADING=1")
        _ = notify.next(containing: "READY=1")
        #expect(try client.call("users.check_username", ["username": "abcd"])["result"]?["code"] == "available")

        try writeFile(directory.path + "/rosterd.conf", "[Timing]\nDebounceMs=120\nBogus=1\n")
        daemon.signal(SIGHUP)
        _ = notify.next(containing: "RELOADING=1")
        _ = notify.next(containing: "READY=1")
        #expect(daemon.waitForLog("reload refused"))
        #expect(daemon.stderr.contains("rosterd.conf:3:"))
        #expect(try daemon.connect().call("session.hello")["result"]?["timing"]?["debounce_ms"] == 120)
        #expect(try client.call("users.check_username", ["username": "abcd"])["result"]?["code"] == "available")
        // The form opened before the reloads still works.
        #expect(try client.call("form.input", ["form": "register", "field": "username", "value": "kim123"])["result"] == ["rev": 1])
    }

    /// The storage keys name the database opened at start: a reload that changes them keeps the one in force,
    /// says it needs a restart (never showing a password), and applies everything else.
    @Test func aReloadThatChangesTheBackendKeepsItAndAppliesTheRest() throws {
        let directory = try TemporaryDirectory()
        let notify = try NotifySocket(in: directory)
        let daemon = try TestDaemon(environment: ["NOTIFY_SOCKET": notify.path], directory: directory,
                                    config: "[Timing]\nDebounceMs=500\n")
        _ = notify.next(containing: "READY=1")
        try writeFile(directory.path + "/rosterd.conf", "[Timing]\nDebounceMs=120\n[Storage]\nBackend=postgresql\n"
                      + "[PostgreSQL]\nConnection=host=/nowhere password=s3cret\n")
        daemon.signal(SIGHUP)
        _ = notify.next(containing: "RELOADING=1")
        _ = notify.next(containing: "READY=1")
        #expect(daemon.waitForLog("[Storage] Backend= changed; it needs a restart, keeping storage sqlite"))
        #expect(daemon.waitForLog("configuration reloaded"))
        let client = try daemon.connect()
        #expect(try client.call("session.hello")["result"]?["timing"]?["debounce_ms"] == 120)
        #expect(try client.call("users.register", ["username": "kept12", "password": "secret1"])["result"] != nil)
        #expect(!daemon.stderr.contains("s3cret"))

        let checked = try capture([TestDaemon.binary, "--config", directory.path + "/rosterd.conf", "--check-config"],
                                  in: directory)
        #expect(checked.status == 0)
        #expect(checked.stdout.contains("storage postgresql 'host=/nowhere password=***' with 4 connection(s)"))
        #expect(!checked.stdout.contains("s3cret"))
    }

    @Test func theWatchdogIsPingedFromTheLoop() throws {
        let directory = try TemporaryDirectory()
        let notify = try NotifySocket(in: directory)
        let daemon = try TestDaemon(environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "200000"], directory: directory)
        defer { daemon.stop() }
        #expect(notify.next(containing: "WATCHDOG=1") == "WATCHDOG=1")
        #expect(notify.next(containing: "WATCHDOG=1") == "WATCHDOG=1")
    }

    @Test func onlineBackupIsACheckedCopyOfTheLiveDatabase() throws {
        let daemon = try TestDaemon()
        let client = try daemon.connect()
        _ = try client.call("users.register", ["username": "leo123", "password": "secret1"])
        let target = daemon.directory.path + "/backup.db"
        let answer = try client.call("admin.backup", ["path": .string(target)])
        #expect(answer["result"]?["path"] == .string(target))
        #expect((answer["result"]?["bytes"]?.int64Value ?? 0) > 0)
        let copy = try Database(path: target)
        #expect(try copy.pragmaValue("PRAGMA integrity_check") == "ok")
        #expect(try UserStore(database: copy).usernameExists("leo123"))
        #expect(try client.call("admin.backup", ["path": "relative.db"])["error"]?["data"]?["reason"] == "out_of_range")
    }

    @Test func aBackupTakenUnderWriteLoadIsCompleteAndConsistent() throws {
        let daemon = try TestDaemon()
        let writer = try daemon.connect()
        _ = try writer.call("users.register", ["username": "busy12", "password": "secret1"])
        _ = try writer.call("auth.login", ["username": "busy12", "password": "secret1"])
        var batch = ""
        for index in 0..<400 { batch += "{\"id\":\(index),\"method\":\"contacts.add\",\"params\":{\"name\":\"Load \(index)\"}}\n" }
        try writer.send(batch)
        let target = daemon.directory.path + "/under-load.db"
        let admin = try daemon.connect()
        #expect(try admin.call("admin.backup", ["path": .string(target)])["result"] != nil)
        for _ in 0..<400 { _ = try writer.readLine() }
        let copy = try Database(path: target)
        #expect(try copy.pragmaValue("PRAGMA integrity_check") == "ok")
        #expect(try copy.pragmaValue("PRAGMA foreign_key_check") == nil)
        let copied = try ContactStore(database: copy).count(userID: 1)
        #expect(copied >= 0 && copied <= 400)
        // Whatever the copy holds is a prefix of what was written: contact ids are consecutive from 1.
        let ids = try ContactStore(database: copy).contacts(userID: 1).map(\.contact.id)
        #expect(ids == (0..<copied).map { Int64($0) + 1 })
    }

    @Test func offlineBackupCopiesTheDatabaseOfAStoppedDaemon() throws {
        let daemon = try TestDaemon()
        _ = try daemon.connect().call("users.register", ["username": "mia123", "password": "secret1"])
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
        let target = daemon.directory.path + "/offline.db"
        let result = try capture([TestDaemon.binary, "--database", daemon.databasePath, "--config", "/dev/null",
                                  "--backup", target], in: daemon.directory)
        #expect(result.status == 0)
        #expect(try UserStore(database: try Database(path: target)).usernameExists("mia123"))
    }

    @Test func anotherUserIsForbiddenTheAdminMethods() throws {
        let daemon = try TestDaemon()
        chmod(daemon.directory.path, 0o755)
        chmod(daemon.directory.path + "/run", 0o755)
        chmod(daemon.socketPath, 0o666)
        let request = daemon.directory.path + "/request.json"
        try writeFile(request, "{\"id\":1,\"method\":\"admin.stats\"}\n")
        let result = try capture(["/bin/sh", "-c", "setpriv --reuid=65534 --regid=65534 --clear-groups socat -t 2 - UNIX-CONNECT:\(daemon.socketPath) < \(request)"],
                                 in: daemon.directory)
        #expect(result.stdout.contains("\"reason\":\"forbidden\""), "\(result)")
    }

    @Test func aSocketPassedBySystemdIsServedAndLeftInPlace() throws {
        let directory = try TemporaryDirectory()
        let socket = directory.path + "/activated.sock"
        // systemd-socket-activate passes on only the variables named with -E, and a sanitizer's must get through.
        let passed = sanitizerOptions().flatMap { ["-E", $0] }
        let pid = try spawn(["/usr/bin/systemd-socket-activate", "-l", socket] + passed + [TestDaemon.binary,
                             "--database", directory.path + "/state/roster.db", "--config", "/dev/null"],
                            environment: ["PATH=/usr/bin:/bin", "HOME=\(directory.path)"], stderrPath: directory.path + "/err")
        defer { kill(pid, SIGKILL); var status: Int32 = 0; waitpid(pid, &status, 0) }
        var client: TestClient?
        for _ in 0..<500 where client == nil {
            client = try? TestClient(path: socket)
            if client == nil { usleep(10_000) }
        }
        #expect(try client?.call("session.whoami")["result"] == ["user": nil])
        kill(pid, SIGTERM)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        #expect(decode(status) == 0, "\((try? readFile(directory.path + "/err")) ?? "")")
        #expect(access(socket, F_OK) == 0)
    }
}

@Suite("Slow and idle peers", .serialized)
struct SlowPeerTests {
    @Test func aHalfSentLineTimesOut() throws {
        let daemon = try TestDaemon(config: "[Server]\nIdleLineTimeoutSec=300ms\n")
        let idle = try daemon.connect()
        let busy = try daemon.connect()
        try idle.send("{\"id\":1,\"method\":")
        #expect(try busy.call("session.whoami")["result"] != nil)
        #expect(try idle.readsEndOfStream())
        #expect(try busy.call("session.whoami")["result"] != nil)
    }

    @Test func aPeerThatNeverReadsIsCutOffAndOthersAreServed() throws {
        let daemon = try TestDaemon(config: "[Server]\nOutputSoftLimitBytes=64K\nOutputHardLimitBytes=256K\nOutputStallTimeoutSec=300ms\n")
        let stalled = try daemon.connect()
        var small: Int32 = 4096
        setsockopt(stalled.fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        var batch = ""
        for id in 0..<2_000 { batch += "{\"id\":\(id),\"method\":\"rpc.describe\"}\n" }
        try stalled.send(batch)
        let other = try daemon.connect()
        var roundTrips: [Int64] = []
        for _ in 0..<50 {
            let start = monotonicNanoseconds()
            #expect(try other.call("session.whoami")["result"] != nil)
            roundTrips.append(monotonicNanoseconds() - start)
        }
        // A reader that stalls costs the others nothing noticeable: their median round trip stays far below a frame.
        #expect(median(roundTrips) < 20_000_000, "median round trip \(median(roundTrips)) ns while a peer stalls")
        #expect(daemon.waitForLog("closing a connection"))
        #expect(try other.call("session.whoami")["result"] != nil)
    }
}
