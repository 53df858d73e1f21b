import Foundation
import Glibc
import Testing

/// The start-up check against the real daemon on SQLite: after a clean shutdown (SIGTERM, exit 0) the next start
/// runs the light check and skips `PRAGMA quick_check`; after a daemon that died (SIGKILL), the full one.
@Suite("Start-up check after a clean or an unclean shutdown", .serialized)
struct CleanShutdownTests {
    private static let config = "[Hashing]\nMemoryKiB=8192\nIterations=1\n"
    private static let light = "database checked at start: light (clean shutdown)"
    private static let full = "database checked at start: quick_check"

    private func register(_ daemon: TestDaemon, _ username: String) throws {
        let answer = try daemon.connect().call("users.register", ["username": .string(username), "password": "secret1"])
        #expect(answer["result"]?["username"] == .string(username), "\(answer)")
    }

    @Test func aCleanShutdownLetsTheNextStartSkipQuickCheckAndAKillDoesNot() throws {
        let first = try TestDaemon(config: Self.config)
        try register(first, "keep12")
        first.signal(SIGTERM)
        #expect(first.waitForExit() == 0)
        let mark = first.databasePath + ".clean"
        #expect(access(mark, F_OK) == 0, "a clean shutdown leaves its mark: \(first.stderr)")
        #expect(access(first.databasePath + "-wal", F_OK) != 0, "and no WAL")

        let second = try TestDaemon(directory: first.directory, config: Self.config)
        #expect(second.stderr.contains(Self.light), "\(second.stderr)")
        #expect(access(mark, F_OK) != 0, "the mark is gone before the daemon serves")
        try register(second, "more12")
        second.signal(SIGKILL)
        #expect(second.waitForExit() == 128 + SIGKILL)

        let third = try TestDaemon(directory: first.directory, config: Self.config)
        #expect(third.stderr.contains(Self.full), "a daemon that died leaves no mark: \(third.stderr)")
        let login = try third.connect().call("auth.login", ["username": "more12", "password": "secret1"])
        #expect(login["result"]?["username"] == "more12", "\(login)")
        third.signal(SIGTERM)
        #expect(third.waitForExit() == 0)
    }

    @Test func aMarkWhoseFileChangedSinceIsNotTrusted() throws {
        let first = try TestDaemon(config: Self.config)
        try register(first, "keep12")
        first.signal(SIGTERM)
        #expect(first.waitForExit() == 0)
        // Rewrite one byte of the file with the value it had: same bytes, but a write the mark did not see.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: first.databasePath))
        try handle.seek(toOffset: 100)
        let byte = try handle.read(upToCount: 1) ?? Data()
        try handle.seek(toOffset: 100)
        try handle.write(contentsOf: byte)
        try handle.close()
        let second = try TestDaemon(directory: first.directory, config: Self.config)
        #expect(second.stderr.contains(Self.full), "\(second.stderr)")
    }
}
