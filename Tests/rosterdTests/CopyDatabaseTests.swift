import Glibc
import RosterProtocol
import Testing

/// What a database holds as a client sees it, to compare a copy with its source.
struct ServedContents: Equatable {
    var username: String
    var vcard: String
    var csv: String
}

/// The rows every copy test moves: an account with an email, its log-in token, a failed log-in, contacts in three
/// scripts, read back as the user would.
enum CopyFixture {
    static let config = "[Hashing]\nMemoryKiB=8192\nIterations=1\n"

    /// Registers alice1, logs in (the token to resume later), fails one log-in, adds contacts; what the user sees.
    static func fill(_ daemon: TestDaemon) throws -> (token: String, contents: ServedContents) {
        let client = try daemon.connect()
        _ = try client.call("users.register", ["username": "alice1", "password": "secret1", "email": "alice@example.org"])
        _ = try client.call("auth.login", ["username": "alice1", "password": "wrong-1"])
        let login = try client.call("auth.login", ["username": "alice1", "password": "secret1"])
        guard let token = login["result"]?["token"]?.stringValue else {
            throw HarnessError(description: "no token: \(login)")
        }
        for contact: JSONValue in [["name": "张三", "phone": "138 0013 8000"], ["name": "Nguyễn Văn Ánh", "note": "a\nb"],
                                   ["name": "김수현", "email": "k@example.org"]] {
            _ = try client.call("contacts.add", contact)
        }
        _ = try client.call("contacts.remove", ["id": 2])
        return (token, try contents(daemon, token: token))
    }

    /// Resumes `token` on `daemon` and reads the user's name and both exports.
    static func contents(_ daemon: TestDaemon, token: String) throws -> ServedContents {
        let client = try daemon.connect()
        let resumed = try client.call("session.resume", ["token": .string(token)])
        guard let username = resumed["result"]?["username"]?.stringValue else {
            throw HarnessError(description: "the token does not resume: \(resumed)")
        }
        func export(_ format: String) throws -> String {
            let answer = try client.call("contacts.export", ["format": .string(format)])
            return answer["result"]?["data"]?.stringValue ?? "no data: \(answer)"
        }
        return ServedContents(username: username, vcard: try export("vcard"), csv: try export("csv"))
    }

    /// `rosterd --copy-database FROM TO`, as an operator's shell runs it.
    static func copy(_ from: String, _ to: String, in directory: TemporaryDirectory)
        throws -> (status: Int32, stdout: String, stderr: String) {
        try capture([TestDaemon.binary, "--copy-database", from, to], in: directory)
    }

    /// Stops the daemon as systemd would, so that its database is free for a copy.
    static func stop(_ daemon: TestDaemon) {
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0, "rosterd did not stop cleanly: \(daemon.stderr)")
    }
}

/// `rosterd --copy-database` between SQLite files with the real binary; the PostgreSQL round trip is in
/// `SharedDatabaseTests`.
@Suite("rosterd --copy-database")
struct CopyDatabaseTests {
    @Test func aCopiedFileServesTheSameUserTokenAndContactsAndAFullTargetIsRefused() throws {
        let first = try TestDaemon(config: CopyFixture.config)
        let (token, before) = try CopyFixture.fill(first)
        let running = try CopyFixture.copy("sqlite:" + first.databasePath, "sqlite:/nonexistent-never/roster.db",
                                           in: first.directory)
        #expect(running.status == 1)
        #expect(running.stderr.contains("in use by the rosterd with PID \(first.pid)"), "\(running.stderr)")
        CopyFixture.stop(first)

        let second = try TemporaryDirectory()
        let target = second.path + "/state/roster.db"
        let copied = try CopyFixture.copy("sqlite:" + first.databasePath, "sqlite:" + target, in: second)
        #expect(copied.status == 0, "\(copied.stderr)")
        #expect(copied.stdout.hasPrefix("copied 1 accounts, 1 tokens, 2 failed log-ins, 2 contacts, 0 recovery codes, 0 TOTP secrets, "
                                        + "4 audit entries, 0 mails, 0 mailed codes, 0 passkeys, 0 passkey user handles, 0 app passwords from sqlite:"),
                "\(copied.stdout)")
        #expect(copied.stderr.isEmpty, "no progress when stderr is not a terminal: \(copied.stderr)")

        let again = try CopyFixture.copy("sqlite:" + first.databasePath, "sqlite:" + target, in: second)
        #expect(again.status == 1)
        #expect(again.stderr.contains("copy refused: sqlite:\(target): the target is not empty (1 accounts"), "\(again.stderr)")

        // The copy took the source's key check along: the daemon on it needs the source's key file.
        let served = try TestDaemon(directory: second,
                                    config: CopyFixture.config + "[Secrets]\nKeyFile=\(first.directory.path)/state/roster.key\n")
        #expect(try CopyFixture.contents(served, token: token) == before)
        let client = try served.connect()
        // The log came along, each log-in's entry with how it was proved (a wrong password, then the right one).
        let logins = try client.call("admin.audit", ["event": "login"])["result"]?["items"]?.arrayValue ?? []
        #expect(logins.map { $0["method"] } == ["password", "password"], "\(logins)")
        let check = try client.call("users.check_username", ["username": "ALICE1"])
        #expect(check["result"]?["code"] == "taken")
        let added = try client.call("users.register", ["username": "bobby1", "password": "secret1"])
        #expect(added["result"]?["username"] == "bobby1", "ids go on after the copied ones: \(added)")
    }

    @Test func onATerminalTheCopyShowsItsProgress() throws {
        let first = try TestDaemon(config: CopyFixture.config)
        _ = try CopyFixture.fill(first)
        CopyFixture.stop(first)
        let target = first.directory.path + "/copy.db"
        // script(1) gives the copy a terminal for its stderr; its output is the terminal's.
        let command = "\(TestDaemon.binary) --copy-database sqlite:\(first.databasePath) sqlite:\(target)"
        let shown = try capture(["/usr/bin/script", "-q", "-e", "-c", command, "/dev/null"], in: first.directory)
        #expect(shown.status == 0, "\(shown.stdout)")
        #expect(shown.stdout.contains("copying: 10 of 10 rows (1 accounts, 1 tokens, 2 failed log-ins, 2 contacts, 0 recovery codes, 0 TOTP secrets, 4 audit entries, 0 mails, 0 mailed codes, 0 passkeys, 0 passkey user handles, 0 app passwords)"),
                "\(shown.stdout)")
        #expect(shown.stdout.contains("copied 1 accounts"), "\(shown.stdout)")
    }
}
