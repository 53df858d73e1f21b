import Glibc
import RosterPostgresTesting
import RosterProtocol
import Testing

/// A database keeps the check value of the key file it was first served with, and a rosterd with another key
/// file refuses to start on it, naming both: on PostgreSQL, a daemon started without the shared `roster.key`
/// (which makes a new one), and on SQLite, a file copied to a host without its key file.
@Suite("The database's key check")
struct KeyCheckTests {
    /// Copies the key file at `from` to `to` (mode 0600), as an operator hands a daemon the shared key.
    private func copyKey(_ from: String, to: String) throws {
        guard let source = fopen(from, "rb") else { throw HarnessError(description: "cannot read \(from)") }
        var key = [UInt8](repeating: 0, count: 32)
        let count = fread(&key, 1, key.count, source)
        fclose(source)
        _ = run(["/bin/mkdir", "-p", String(to[..<(to.lastIndex(of: "/") ?? to.endIndex)])])
        let fd = open(to, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard count == 32, fd >= 0 else { throw HarnessError(description: "cannot write \(to)") }
        defer { close(fd) }
        guard write(fd, key, key.count) == key.count else { throw HarnessError(description: "short write to \(to)") }
    }

    @Test func onPostgreSQLADaemonWithAnotherKeyFileRefusesToStartNamingBoth() throws {
        let shared = try SharedDatabase()
        let config = SharedDatabase.config(conninfo: shared.conninfo)
        let first = try TestDaemon(config: config)
        defer { first.stop() }
        #expect(first.waitForLog("now keeps the check value of the key file \(first.directory.path)/state/roster.key"))

        // The second host was not given the shared roster.key: it makes one of its own, and must not serve.
        let second = try TestDaemon(config: config, waitUntilReady: false)
        let status = second.waitForExit()
        #expect(status == 1, "a daemon with another key file served: \(second.stderr)")
        let key = second.directory.path + "/state/roster.key"
        #expect(second.stderr.contains("the key file \(key) is not the one the PostgreSQL database (\(shared.conninfo)) "
                                       + "was first served with"), "\(second.stderr)")
        #expect(second.stderr.contains("[key_mismatch]"))
        #expect(access(second.socketPath, F_OK) != 0)
        // The key it made for nothing is gone, so the shared one can be put in its place.
        #expect(access(key, F_OK) != 0, "the refused start left the key file it made")

        try copyKey(first.directory.path + "/state/roster.key", to: key)
        let third = try TestDaemon(directory: second.directory, config: config)
        defer { third.stop() }
        let client = try third.connect()
        try client.register("alice1")
    }

    @Test func aSQLiteFileCopiedWithoutItsKeyFileIsRefusedNamingBoth() throws {
        let original = try TestDaemon(config: CopyFixture.config)
        try original.connect().register("alice1")
        CopyFixture.stop(original)

        let elsewhere = try TemporaryDirectory()
        _ = run(["/bin/mkdir", "-p", elsewhere.path + "/state"])
        // The file and its WAL, if one was left, as a copy of the directory would take them.
        #expect(run(["/bin/sh", "-c", "cp \"$0\" \"$1\" && if [ -e \"$0-wal\" ]; then cp \"$0-wal\" \"$1-wal\"; fi",
                     original.databasePath, elsewhere.path + "/state/roster.db"]) == 0)
        let moved = try TestDaemon(directory: elsewhere, config: CopyFixture.config, waitUntilReady: false)
        #expect(moved.waitForExit() == 1, "a copied database was served with a new key: \(moved.stderr)")
        let key = elsewhere.path + "/state/roster.key"
        #expect(moved.stderr.contains("the key file \(key) is not the one the database \(moved.databasePath) was first "
                                      + "served with"), "\(moved.stderr)")
        #expect(moved.stderr.contains("[key_mismatch]"))

        // With its own key file beside it, the copy is served.
        try copyKey(original.directory.path + "/state/roster.key", to: key)
        let served = try TestDaemon(directory: elsewhere, config: CopyFixture.config)
        defer { served.stop() }
        #expect(try served.connect().call("users.check_username", ["username": "alice1"])["result"]?["code"] == "taken")
    }
}
