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

/// `--copy-database` takes the source's key check along with the sealed secrets it copies: a daemon on the
/// target needs the source's key file, and is refused with another.
@Suite("The key check across --copy-database")
struct KeyCheckCopyTests {
    @Test func aCopiedDatabaseRefusesADaemonWithoutTheSourcesKeyFile() throws {
        let original = try TestDaemon(config: CopyFixture.config)
        try original.connect().register("alice1")
        CopyFixture.stop(original)
        let shared = try SharedDatabase()
        let copied = try CopyFixture.copy("sqlite:" + original.databasePath, "postgresql:" + shared.conninfo,
                                          in: original.directory)
        #expect(copied.status == 0, "\(copied.stderr)")

        let config = SharedDatabase.config(conninfo: shared.conninfo)
        let stranger = try TestDaemon(config: config, waitUntilReady: false)
        #expect(stranger.waitForExit() == 1, "a daemon with a new key file served the copy: \(stranger.stderr)")
        #expect(stranger.stderr.contains("[key_mismatch]"), "\(stranger.stderr)")

        let key = stranger.directory.path + "/state/roster.key"
        #expect(run(["/bin/cp", original.directory.path + "/state/roster.key", key]) == 0)
        #expect(chmod(key, 0o600) == 0)
        let served = try TestDaemon(directory: stranger.directory, config: config)
        defer { served.stop() }
        #expect(try served.connect().call("users.check_username", ["username": "alice1"])["result"]?["code"] == "taken")
    }
}

/// A database from before the key check holds TOTP secrets sealed with some key already: the first daemon to
/// store a check value must have a key that opens them, so that a wrong key file is not the one adopted.
@Suite("The key check of a database from before it")
struct KeyCheckAdoptionTests {
    @Test func aDatabaseWithoutACheckValueIsAdoptedOnlyByAKeyThatOpensItsSecrets() throws {
        let original = try TestDaemon(config: CopyFixture.config)
        try original.connect().register("alice1")
        CopyFixture.stop(original)
        // As a database migrated before the check: no value kept, and a TOTP secret sealed with another key.
        #expect(run(["/usr/bin/sqlite3", original.databasePath, "DELETE FROM key_check; INSERT INTO totp(user_id, sealed) "
                     + "SELECT id, randomblob(60) FROM users"]) == 0)
        let refused = try TestDaemon(directory: original.directory, config: CopyFixture.config, waitUntilReady: false)
        #expect(refused.waitForExit() == 1, "adopted by a key that opens none of its secrets: \(refused.stderr)")
        #expect(refused.stderr.contains("[key_mismatch]"), "\(refused.stderr)")
        // Without secrets, the key in place is adopted and the database keeps its value from then on.
        #expect(run(["/usr/bin/sqlite3", original.databasePath, "DELETE FROM totp"]) == 0)
        let adopted = try TestDaemon(directory: original.directory, config: CopyFixture.config)
        defer { adopted.stop() }
        #expect(adopted.waitForLog("now keeps the check value of the key file"))
    }
}
