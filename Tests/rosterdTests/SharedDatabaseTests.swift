import Glibc
import RosterPostgresTesting
import RosterProtocol
import Testing

/// protocol.md §Storage: two rosterd processes on two sockets sharing one PostgreSQL database keep its
/// promises across them, as one daemon does alone. The 50 ms of the `taken` event is roster-bench's
/// (`cross-daemon`); here the event must arrive.
@Suite("Two daemons sharing PostgreSQL")
struct SharedDatabaseTests {
    @Test func aNameRegisteredOnAIsTakenOnBsOpenForm() throws {
        let (a, b) = try SharedDatabase().pair()
        let form = try b.connect()
        try form.helloWithoutDebounce()
        _ = try form.call("form.open", ["form": "register"])
        _ = try form.call("form.input", ["form": "register", "field": "username", "value": "shared1"])
        #expect(try form.waitForField("username", state: "valid")["code"] == "available")

        let writer = try a.connect()
        try writer.register("shared1")
        let taken = try form.waitForField("username", state: "invalid")
        #expect(taken["code"] == "taken")
        #expect(taken["rev"] == 1, "the same input re-checked, not a new one")
        #expect(try form.call("users.check_username", ["username": "SHARED1"])["result"]?["code"] == "taken")
    }

    /// An email changed on A is announced as a registration is: B's open register form holding the new address sees
    /// it `taken`, the one holding the old address sees it free again, and B's session of the user knows the new one.
    @Test func anEmailChangedOnAIsTakenOnBsOpenFormAndTheOldOneIsFreeThere() throws {
        let (a, b) = try SharedDatabase().pair()
        let onA = try a.connect()
        let registered = try onA.call("users.register", ["username": "mover1", "password": "secret1", "email": "old@example.com"])
        #expect(registered["result"]?["username"] == "mover1", "\(registered)")
        try onA.logIn("mover1")
        let onB = try b.connect()
        try onB.logIn("mover1")
        func emailForm(_ email: String) throws -> TestClient {
            let form = try b.connect()
            try form.helloWithoutDebounce()
            _ = try form.call("form.open", ["form": "register"])
            _ = try form.call("form.input", ["form": "register", "field": "email", "value": .string(email)])
            return form
        }
        let wantsNew = try emailForm("new@example.com")
        let wantsOld = try emailForm("old@example.com")
        #expect(try wantsNew.waitForField("email", state: "valid")["code"] == "valid")
        #expect(try wantsOld.waitForField("email", state: "invalid")["code"] == "taken")

        let changed = try onA.call("account.change_email", ["password": "secret1", "email": "new@example.com"])
        #expect(changed["result"]?["email"] == "new@example.com", "\(changed)")
        let taken = try wantsNew.waitForField("email", state: "invalid")
        #expect(taken["code"] == "taken")
        #expect(taken["rev"] == 1, "the same input re-checked, not a new one")
        #expect(try wantsOld.waitForField("email", state: "valid")["rev"] == 1)
        #expect(try onB.call("session.whoami")["result"]?["user"]?["email"] == "new@example.com")
    }

    @Test func oneNameRegisteredOnBothAtOnceHasExactlyOneWinner() throws {
        let (a, b) = try SharedDatabase().pair()
        let onA = try a.connect()
        let onB = try b.connect()
        for round in 0..<6 {
            let line = "{\"id\":\(round),\"method\":\"users.register\",\"params\":{\"username\":\"racer\(round)x\",\"password\":\"secret1\"}}\n"
            // Both are sent before either answer is read: each daemon hashes, then both insert at about one instant.
            try onA.send(line)
            try onB.send(line)
            let answers = [try onA.readLine(), try onB.readLine()]
            #expect(answers.filter { $0["result"]?["username"] == .string("racer\(round)x") }.count == 1, "\(answers)")
            #expect(answers.compactMap(failureReason) == ["taken"], "\(answers)")
        }
    }

    @Test func failedLogInsCountAcrossDaemons() throws {
        let (a, b) = try SharedDatabase(extra: "[Login]\nRateLimitBurst=4\n").pair()
        let onA = try a.connect()
        let onB = try b.connect()
        try onA.register("limit1")
        for client in [onA, onB, onA, onB] {
            let wrong = try client.call("auth.login", ["username": "limit1", "password": "wrong-1"])
            #expect(failureReason(wrong) == "wrong_password", "\(wrong)")
        }
        // Four failures, two on each: the account is limited on both, even with the right password.
        for client in [onB, onA] {
            let limited = try client.call("auth.login", ["username": "limit1", "password": "secret1"])
            #expect(failureReason(limited) == "rate_limited", "\(limited)")
            #expect((limited["error"]?["data"]?["retry_after_ms"]?.int64Value ?? 0) > 0)
        }
    }

    /// Failures on made-up names count across daemons apart from those on real accounts: twenty of them (ten
    /// accounts' worth at burst 2), half on each, limit the next made-up name on both, and a real account's right
    /// password from the same uid still logs in on both.
    @Test func madeUpNamesOnBothDaemonsLimitOnlyMadeUpNames() throws {
        let (a, b) = try SharedDatabase(extra: "[Login]\nRateLimitBurst=2\n").pair()
        let onA = try a.connect()
        let onB = try b.connect()
        try onA.register("limit2")
        for index in 0..<20 {
            let client = index.isMultiple(of: 2) ? onA : onB
            let answer = try client.call("auth.login", ["username": .string("ghost\(index)"), "password": "wrong-1"])
            #expect(failureReason(answer) == "not_found", "\(answer)")
        }
        for client in [onA, onB] {
            let limited = try client.call("auth.login", ["username": .string("ghost-\(client === onA)"), "password": "wrong-1"])
            #expect(failureReason(limited) == "rate_limited", "\(limited)")
            #expect(try client.call("auth.login", ["username": "limit2", "password": "secret1"])["result"]?["token"] != nil)
        }
    }

    @Test func aTokenFromAResumesOnBAndLogoutOnAEndsBsSession() throws {
        let (a, b) = try SharedDatabase().pair()
        let onA = try a.connect()
        try onA.register("token1")
        let token = try onA.logIn("token1")
        let onB = try b.connect()
        #expect(try onB.call("session.resume", ["token": .string(token)])["result"]?["username"] == "token1")

        #expect(try onA.call("session.logout")["result"] == [:])
        // B's own resume sent `session` with the user; the logout on A must send one with null.
        _ = try onB.waitForEvent { $0["type"] == "session" && $0["user"] == .null }
        #expect(try onB.call("session.whoami")["result"]?["user"] == .null)
        #expect(try b.connect().call("session.resume", ["token": .string(token)])["result"] == nil)
    }

    /// A deletion on A ends the user's session on B, and B's open register form holding the name sees
    /// it free again; the name registers on B.
    @Test func anAccountDeletedOnAEndsItsSessionOnBAndFreesTheNameThere() throws {
        let (a, b) = try SharedDatabase().pair()
        let onA = try a.connect()
        try onA.register("leaver1")
        try onA.logIn("leaver1")
        let onB = try b.connect()
        try onB.logIn("leaver1")
        let form = try b.connect()
        try form.helloWithoutDebounce()
        _ = try form.call("form.open", ["form": "register"])
        _ = try form.call("form.input", ["form": "register", "field": "username", "value": "leaver1"])
        #expect(try form.waitForField("username", state: "invalid")["code"] == "taken")

        #expect(try onA.call("account.delete", ["password": "secret1"])["result"] == [:])
        _ = try onB.waitForEvent { $0["type"] == "session" && $0["user"] == .null }
        #expect(try onB.call("session.whoami")["result"]?["user"] == .null)
        #expect(try form.waitForField("username", state: "valid")["code"] == "available")
        #expect(try b.connect().call("users.register", ["username": "leaver1", "password": "secret2"])["result"]?["username"]
                == "leaver1")
    }

    /// A password change on A ends the user's other session on B and keeps A's own; the old password
    /// fails on B and the new one works there.
    @Test func aPasswordChangedOnAEndsTheOtherSessionOnB() throws {
        let (a, b) = try SharedDatabase().pair()
        let onA = try a.connect()
        try onA.register("mover1")
        try onA.logIn("mover1")
        let onB = try b.connect()
        try onB.logIn("mover1")

        #expect(try onA.call("account.change_password", ["current": "secret1", "new": "secret2"])["result"]?["revoked"] == 1)
        _ = try onB.waitForEvent { $0["type"] == "session" && $0["user"] == .null }
        #expect(try onA.call("session.whoami")["result"]?["user"]?["username"] == "mover1")
        #expect(failureReason(try b.connect().call("auth.login", ["username": "mover1", "password": "secret1"]))
                == "wrong_password")
        #expect(try b.connect().call("auth.login", ["username": "mover1", "password": "secret2"])["result"]?["username"]
                == "mover1")
    }

    /// A lock on A ends the user's session on B at once (the lock's `sessions-ended`), and B answers
    /// `locked` to the log-in; an unlock on A brings the log-in back on B.
    @Test func aLockOnAEndsTheSessionOnBAndBAnswersLocked() throws {
        let (a, b) = try SharedDatabase().pair()
        let onA = try a.connect()
        try onA.register("locked1")
        let onB = try b.connect()
        try onB.logIn("locked1")

        #expect(try a.connect().call("admin.users.lock", ["username": "locked1"])["result"] == [:])
        _ = try onB.waitForEvent { $0["type"] == "session" && $0["user"] == .null }
        #expect(failureReason(try b.connect().call("auth.login", ["username": "locked1", "password": "secret1"]))
                == "locked")
        #expect(try a.connect().call("admin.users.unlock", ["username": "locked1"])["result"] == [:])
        #expect(try b.connect().call("auth.login", ["username": "locked1", "password": "secret1"])["result"]?["username"]
                == "locked1")
    }

    @Test func aContactAddedOnARefreshesBsOpenContactsForm() throws {
        let (a, b) = try SharedDatabase().pair()
        let onA = try a.connect()
        try onA.register("books1")
        try onA.logIn("books1")
        let onB = try b.connect()
        try onB.logIn("books1")
        _ = try onB.call("form.open", ["form": "contacts"])
        #expect(try onB.waitForEvent { $0["type"] == "results" }["total"] == 0)

        #expect(try onA.call("contacts.add", ["name": "张三", "phone": "138 0013 8000"])["result"] != nil)
        let pushed = try onB.waitForEvent { $0["type"] == "results" }
        #expect(pushed["total"] == 1)
        #expect(pushed["items"]?.arrayValue?.first?["name"] == "张三")
    }

    /// A card put through A shows in B's next contacts.changes, B's stale if_match is refused after A changed the
    /// card again, and a removal through B is in A's next changes.
    @Test func aCardPutThroughAShowsInBsNextChangesAndIfMatchHoldsAcrossThem() throws {
        let (a, b) = try SharedDatabase().pair()
        let onA = try a.connect()
        try onA.register("cards1")
        try onA.logIn("cards1")
        let onB = try b.connect()
        try onB.logIn("cards1")
        let start = try #require(try onB.call("contacts.changes", [:])["result"]?["token"]?.stringValue)
        let card = "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Shared Card\r\nX-KEPT:yes\r\nEND:VCARD\r\n"
        let put = try onA.call("contacts.put_vcard", ["uid": "shared-1", "vcard": .string(card)])
        let etag = try #require(put["result"]?["etag"]?.stringValue)
        #expect(put["result"]?["created"] == true)
        let seen = try onB.call("contacts.changes", ["since": .string(start)])["result"]
        #expect(seen?["changed"]?.arrayValue?.map { $0["uid"] } == ["shared-1"])
        #expect(try onB.call("contacts.get_vcard", ["uid": "shared-1"])["result"]?["vcard"] == .string(card))
        let token = try #require(seen?["token"]?.stringValue)
        // A changes it again; B's put with the etag it read is stale.
        let again = try onA.call("contacts.put_vcard", ["uid": "shared-1", "vcard": .string(card), "if_match": .string(etag)])
        #expect(again["result"] != nil)
        #expect(failureReason(try onB.call("contacts.put_vcard", ["uid": "shared-1", "vcard": .string(card),
                                                                   "if_match": .string(etag)])) == "precondition_failed")
        #expect(try onB.call("contacts.remove", ["uid": "shared-1"])["result"] != nil)
        let after = try onA.call("contacts.changes", ["since": .string(token)])["result"]
        #expect(after?["removed"] == ["shared-1"])
        #expect(after?["changed"] == [])
    }
}

/// Faults: a daemon killed, the database crashed, mid-storm. Nothing answered is lost, nothing hangs,
/// and the daemons come back by themselves.
@Suite("Two daemons sharing PostgreSQL, under faults", .serialized)
struct SharedDatabaseFaultTests {
    private static let storm = "[Hashing]\nQueueLimit=4096\n[Login]\nRateLimitBurst=100000\n"

    private static func registration(_ prefix: String) -> @Sendable (Int, Int) -> (key: String, line: String) {
        { client, index in
            let name = "\(prefix)\(client)x\(index)"
            return (name, "{\"id\":\(index),\"method\":\"users.register\",\"params\":{\"username\":\"\(name)\",\"password\":\"secret1\"}}\n")
        }
    }

    /// Every name is registered as a fresh daemon on the database reads it (nothing of A's or B's memory counts).
    private func expectPresent(_ names: [String], on database: SharedDatabase) throws {
        let fresh = try database.daemon()
        let client = try fresh.connect()
        for name in names {
            let check = try client.call("users.check_username", ["username": .string(name)])
            #expect(check["result"]?["code"] == "taken", "\(name) was acknowledged but is not stored: \(check)")
        }
        for name in names.prefix(5) { try client.logIn(name) }
    }

    @Test func killNineOfOneDaemonMidStormLosesNoAcknowledgedAccountAndTheOtherServesOn() throws {
        let database = try SharedDatabase(extra: Self.storm)
        let (a, b) = try database.pair()
        let outcome = try RequestStorm.run(a, clients: 10, perClient: 10, faultAfterMs: Int.random(in: 0...300),
                                           request: Self.registration("kill")) {
            a.signal(SIGKILL)
            _ = a.waitForExit()
        }
        #expect(!outcome.acknowledged.isEmpty)
        #expect(b.poll() == nil, "B died with A: \(b.stderr)")
        try b.connect().register("after1")
        try expectPresent(outcome.acknowledged + ["after1"], on: database)
    }

    @Test func aDatabaseCrashMidStormAnswersStorageUnavailableAndEverythingResumesByItself() throws {
        let cluster = try PostgresTestCluster()
        defer { cluster.destroy() }
        let database = try SharedDatabase(cluster: cluster, extra: Self.storm)
        let (a, b) = try database.pair()
        let outcome = try RequestStorm.run(a, clients: 10, perClient: 10, faultAfterMs: Int.random(in: 50...300),
                                           request: Self.registration("crash")) {
            cluster.stopImmediately()
        }
        // No hang: every request of the storm was answered, a result or a refusal that names the outage.
        #expect(outcome.unanswered == 0)
        #expect(!outcome.acknowledged.isEmpty)
        #expect(Set(outcome.refusals).isSubset(of: ["storage_unavailable", "busy"]), "\(Dictionary(grouping: outcome.refusals, by: { $0 }).mapValues(\.count))")

        for daemon in [a, b] {
            let client = try daemon.connect()
            let refused = try client.call("users.register", ["username": "during1", "password": "secret1"])
            #expect(failureReason(refused) == "storage_unavailable", "\(refused)")
            #expect((refused["error"]?["data"]?["retry_after_ms"]?.int64Value ?? 0) > 0)
            // A username check answers from the directory meanwhile.
            if let known = outcome.acknowledged.first {
                #expect(try client.call("users.check_username", ["username": .string(known)])["result"]?["code"] == "taken")
            }
            let stats = try client.call("admin.stats")
            #expect(stats["result"]?["storage"]?["state"] == "down", "\(stats)")
        }
        #expect(a.poll() == nil && b.poll() == nil, "a daemon died with the database: \(a.stderr) \(b.stderr)")

        try cluster.start()
        for (daemon, name) in [(a, "back1a"), (b, "back1b")] {
            let client = try daemon.connect()
            // The daemon reconnects with its backoff; a registration succeeds again without a restart.
            let back = try eventually(timeoutMs: 20_000) {
                try client.call("users.register", ["username": .string(name), "password": "secret1"])["result"] != nil
            }
            #expect(back, "\(name) never succeeded: \(daemon.stderr)")
            #expect(try client.call("admin.stats")["result"]?["storage"]?["state"] == "up")
        }
        try expectPresent(outcome.acknowledged + ["back1a", "back1b"], on: database)
    }
}

/// `--copy-database` between SQLite and PostgreSQL keeps what users see: SQLite → PostgreSQL →
/// PostgreSQL → SQLite, with the token resuming and both exports identical at every step.
@Suite("rosterd --copy-database with PostgreSQL")
struct PostgreSQLCopyRoundTripTests {
    @Test func sqliteToPostgresqlToPostgresqlToSqliteKeepsUsersTokensAndContacts() throws {
        let first = try TestDaemon(config: CopyFixture.config)
        let (token, before) = try CopyFixture.fill(first)
        CopyFixture.stop(first)
        let work = try TemporaryDirectory()

        let cluster = try PostgresTestCluster.shared
        let shared = try cluster.createDatabase()
        let intoPG = try CopyFixture.copy("sqlite:" + first.databasePath, "postgresql:" + shared, in: work)
        #expect(intoPG.status == 0, "\(intoPG.stderr)")
        #expect(intoPG.stdout.hasPrefix("copied 1 accounts, 1 tokens, 2 failed log-ins, 2 contacts"), "\(intoPG.stdout)")
        // The copy takes the source's key check along: its daemons need the source's key file.
        let key = "[Secrets]\nKeyFile=\(first.directory.path)/state/roster.key\n"
        let onPG = try TestDaemon(config: SharedDatabase.config(conninfo: shared, extra: key))
        #expect(try CopyFixture.contents(onPG, token: token) == before)
        CopyFixture.stop(onPG)
        let refused = try CopyFixture.copy("sqlite:" + first.databasePath, "postgresql:" + shared, in: work)
        #expect(refused.status == 1 && refused.stderr.contains("the target is not empty"), "\(refused.stderr)")

        let second = try cluster.createDatabase()
        let pgToPG = try CopyFixture.copy("postgresql:" + shared, "postgresql:" + second, in: work)
        #expect(pgToPG.status == 0, "\(pgToPG.stderr)")

        let target = work.path + "/state/roster.db"
        let back = try CopyFixture.copy("postgresql:" + second, "sqlite:" + target, in: work)
        #expect(back.status == 0, "\(back.stderr)")
        #expect(back.stdout.hasPrefix("copied 1 accounts, 1 tokens, 2 failed log-ins, 2 contacts"), "\(back.stdout)")
        let onSQLite = try TestDaemon(directory: work, config: CopyFixture.config + key)
        #expect(try CopyFixture.contents(onSQLite, token: token) == before)
        let client = try onSQLite.connect()
        try client.register("bobby1")
        #expect(try client.call("users.check_username", ["username": "alice1"])["result"]?["code"] == "taken")
    }
}
