import RosterCore
@testable import RosterPostgres
import RosterPostgresTesting
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Testing

/// What PostgreSQL adds to the storage contract (which `RosterStorageContractTests` checks): two instances on
/// one database hear of each other's changes and never of their own, a listener that reconnects reads the
/// directory again and says `.resync`, the directory is read in pages, and times are the database's clock.
@Suite("PostgreSQL storage across instances")
struct PostgreSQLStorageTests {
    private let placeholderHash = StoragePair.placeholderHash

    @Test func eachInstanceHearsTheOthersChangesAndNeverItsOwn() throws {
        let pair = try StoragePair()
        try pair.waitForListeners()
        try pair.warmUp()

        let alice = try pair.register("alice1", email: "alice@example.com", on: pair.a)
        try pair.harness.run(until: { !pair.heardByB.isEmpty })
        #expect(pair.heardByB == [.accountCreated(username: "alice1", email: "alice@example.com")])
        // B's directory had it before B was told.
        #expect(pair.b.knownUsernameTaken("ALICE1") == true)

        let token = [UInt8](repeating: 7, count: 32)
        try pair.value { pair.a.acting(for: .daemon).storeToken(hash: token, for: alice.id, completion: $0) }
        #expect(try pair.value { pair.b.acting(for: .daemon).revokeToken(hash: token, completion: $0) })
        // A revoke of what is gone tells nobody.
        #expect(try !pair.value { pair.b.acting(for: .daemon).revokeToken(hash: token, completion: $0) })
        let added = try pair.value { pair.b.acting(for: .daemon).addContact(ContactDraft(name: "Bo"), for: alice.id,
                                                                            completion: $0) }
        _ = try pair.value { pair.b.acting(for: .daemon).updateContact(added.contact.id, of: alice.id,
                                                                       with: ContactPatch(name: nil, phone: "1", email: nil, note: nil),
                                                                       completion: $0) }
        _ = try pair.value { pair.b.acting(for: .daemon).removeContact(added.contact.id, of: alice.id, completion: $0) }
        _ = try pair.value { pair.b.acting(for: .daemon).importContacts("name\nCy\n", format: .csv, for: alice.id,
                                                                        completion: $0) }
        let expected: [StorageChange] = [.tokenRevoked(hash: token)] + Array(repeating: .contactsChanged(account: alice.id),
                                                                            count: 4)
        try pair.harness.run(until: { pair.heardByA.count >= expected.count })
        #expect(pair.heardByA == expected)
        // A marker through the same channel: everything sent before it has arrived, so no echo is on its way.
        _ = try pair.register("marker", on: pair.b)
        try pair.harness.run(until: { pair.heardByA.count == expected.count + 1 })
        #expect(pair.heardByB == [.accountCreated(username: "alice1", email: "alice@example.com")])
    }

    /// Issue 15: a deletion on A reaches B in its own transaction: B's directory forgets the name before B is
    /// told, and B hears of the deletion and of every token it revoked, exactly those.
    @Test func aDeletionOnOneInstanceIsHeardByTheOtherWithItsTokens() throws {
        let pair = try StoragePair()
        try pair.waitForListeners()
        try pair.warmUp()
        let alice = try pair.register("alice1", email: "alice@example.com", on: pair.a)
        let bob = try pair.register("bobby1", on: pair.a)
        let tokens = (1...2).map { [UInt8](repeating: $0, count: 32) }
        for token in tokens { try pair.value { pair.a.acting(for: .daemon).storeToken(hash: token, for: alice.id,
                completion: $0) } }
        try pair.value { pair.a.acting(for: .daemon).storeToken(hash: [UInt8](repeating: 9, count: 32), for: bob.id,
                                                                completion: $0) }
        try pair.harness.run(until: { pair.heardByB.count == 2 })
        #expect(pair.b.knownUsernameTaken("alice1") == true)
        pair.heardByB = []

        let deleted = try pair.value { pair.a.acting(for: .daemon).deleteAccount(alice.id,
                failureKeys: ["account:alice1"], completion: $0) }
        #expect(Set(deleted?.revokedTokens ?? []) == Set(tokens))
        #expect(pair.a.knownUsernameTaken("ALICE1") == false)
        try pair.harness.run(until: { pair.heardByB.count >= 3 })
        #expect(pair.heardByB.first { if case .accountDeleted = $0 { true } else { false } }
                == .accountDeleted(id: alice.id, username: "alice1", email: "alice@example.com"))
        #expect(Set(pair.heardByB.compactMap { if case .tokenRevoked(let hash) = $0 { hash } else { nil } }) == Set(tokens))
        #expect(pair.b.knownUsernameTaken("Alice1") == false)
        // A marker: nothing more was sent (Bob's token was not revoked), and A heard none of its own.
        _ = try pair.register("marker", on: pair.a)
        try pair.harness.run(until: { pair.heardByB.count == 4 })
        #expect(pair.heardByB.count == 4)
        #expect(pair.heardByA.isEmpty)
    }

    /// Issue 15: a password change, a revocation of the others and a recovery on A each reach B as one
    /// `tokenRevoked` per token they revoked, and never the token kept.
    @Test func tokensRevokedOnOneInstanceAreHeardByTheOtherOneByOne() throws {
        let pair = try StoragePair()
        try pair.waitForListeners()
        let carol = try pair.register("carol1", on: pair.a)
        let token = { (byte: UInt8) in [UInt8](repeating: byte, count: 32) }
        for byte: UInt8 in 1...5 {
            try pair.value { pair.a.acting(for: .daemon).storeToken(hash: token(byte), for: carol.id, completion: $0) }
        }
        try pair.harness.run(until: { pair.heardByB.count == 1 })
        pair.heardByB = []
        let newHash = placeholderHash + "x"
        let changed = try pair.value { pair.a.acting(for: .daemon).changePassword(of: carol.id, to: newHash,
                keeping: token(5), completion: $0) }
        #expect(changed.count == 4)
        try pair.value { pair.a.acting(for: .daemon).storeToken(hash: token(6), for: carol.id, completion: $0) }
        #expect(try pair.value { pair.a.acting(for: .daemon).revokeTokens(of: carol.id, except: token(5),
                                                                          completion: $0) }
                == [token(6)])
        try pair.value { pair.a.acting(for: .daemon).replaceRecoveryCodes(of: carol.id, hashes: [token(7)],
                                                                          completion: $0) }
        #expect(try pair.value { pair.a.acting(for: .daemon).redeemRecoveryCode(of: carol.id, codeHash: token(7),
                                                                                newPasswordHash: newHash,
                                                                                completion: $0) } == [token(5)])
        let expected = (1...6).map { StorageChange.tokenRevoked(hash: token($0)) }
        try pair.harness.run(until: { pair.heardByB.count >= expected.count })
        #expect(Set(pair.heardByB.map { "\($0)" }) == Set(expected.map { "\($0)" }))
        #expect(pair.heardByB.count == expected.count)
        #expect(pair.heardByA.isEmpty)
    }

    /// Tokens a new one pushes out past the per-account cap on A reach B as one `tokenRevoked` each, in the order
    /// they went, and never the new one.
    @Test func tokensPushedOutPastTheCapOnOneInstanceAreHeardByTheOther() throws {
        let pair = try StoragePair()
        try pair.waitForListeners()
        let dora = try pair.register("dora01", on: pair.a)
        let token = { (byte: UInt8) in [UInt8](repeating: byte, count: 32) }
        let limit = TokenLimit(maxTokens: 2, revocation: nil)
        for byte: UInt8 in 1...4 {
            _ = try pair.value { pair.a.acting(for: .daemon).storeToken(hash: token(byte), for: dora.id, client: nil,
                                                                        audit: nil, limit: limit, completion: $0) }
        }
        let expected = [1, 2].map { StorageChange.tokenRevoked(hash: token($0)) }
        try pair.harness.run(until: { pair.heardByB.count >= 1 + expected.count })
        #expect(pair.heardByB.dropFirst().map { "\($0)" } == expected.map { "\($0)" })
        #expect(pair.heardByA.isEmpty)
    }

    @Test func aListenerThatReconnectsReadsTheDirectoryAgainThenSaysResync() throws {
        let pair = try StoragePair()
        try pair.waitForListeners()
        try pair.warmUp()
        // Both listeners go (they look alike to the server); a row written meanwhile is a notification lost.
        let cluster = try PostgresTestCluster.shared
        try cluster.psql("""
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(pair.database)' AND query LIKE 'LISTEN%'
            """)
        // The row is written behind rosterd's back, as if its notification was lost.
        try cluster.psql("""
            INSERT INTO users(canonical, username_key, display, password_hash, created_at)
            VALUES ('Missed1', 'missed1', 'Missed1', '\(placeholderHash)', 0)
            """, database: pair.database)
        try pair.harness.run(until: { pair.heardByA.contains(.resync) && pair.heardByB.contains(.resync) },
                             within: .seconds(20))
        // Each directory was read again before `.resync` was said.
        #expect(pair.a.knownUsernameTaken("missed1") == true)
        #expect(pair.b.knownUsernameTaken("MISSED1") == true)
    }

    @Test func theDirectoryIsReadInPagesAndKeepsWhatCommitsMeanwhile() throws {
        let pair = try StoragePair()
        let count = PostgreSQLStorage.directoryPage * 2 + 17
        try PostgresTestCluster.shared.psql("""
            INSERT INTO users(canonical, username_key, display, password_hash, created_at)
            SELECT 'User' || n, 'user' || n, 'User' || n, '\(placeholderHash)', 0 FROM generate_series(1, \(count)) n
            """, database: pair.database)
        pair.a.warmUp()
        // Committed while the pages are read: counted whether the pages saw it or not.
        _ = try pair.register("during", on: pair.a)
        try pair.harness.run(until: { pair.a.knownUsernameTaken("nobody") != nil })
        for n in [1, PostgreSQLStorage.directoryPage, PostgreSQLStorage.directoryPage + 1, count] {
            #expect(pair.a.knownUsernameTaken("User\(n)") == true, "User\(n)")
        }
        #expect(pair.a.knownUsernameTaken("during") == true)
        #expect(pair.a.knownUsernameTaken("User\(count + 1)") == false)
        let statistics = try pair.value { pair.a.statistics(completion: $0) }
        #expect(statistics.accounts == count + 1)
        #expect(statistics.usernameDirectory == "ready")
        #expect(statistics.state.backend == "postgresql" && statistics.state.phase == .up)
        #expect(statistics.queues.keys.sorted() == ["storage"])
    }

    @Test func withoutATestClockTimesAreTheDatabases() throws {
        let pair = try StoragePair(clock: nil)
        let name = pair.database
        let before = try PostgresTestCluster.shared.psql(
            "SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint", database: name)
        let account = try pair.register("clock1", on: pair.a)
        try pair.value { pair.a.acting(for: .daemon).recordFailure(keys: ["k"], completion: $0) }
        let recent = try pair.value { pair.b.acting(for: .daemon).recentFailures(keys: ["k"], windowMs: 60_000,
                completion: $0) }
        let after = try PostgresTestCluster.shared.psql(
            "SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint", database: name)
        let low = try #require(Int64(before.trimmingCharacters(in: .whitespacesAndNewlines)))
        let high = try #require(Int64(after.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect((low...high).contains(account.createdAtMs))
        #expect((low...high).contains(recent.nowMs))
        #expect(recent.times["k"]?.count == 1)
        #expect(recent.times["k"].map { $0.allSatisfy { (low...high).contains($0) } } == true)
    }

    @Test func aStopWhileTheDatabaseAnswersLeavesNoCompletionUncalled() throws {
        let pair = try StoragePair()
        var answers = 0
        for index in 0..<20 {
            pair.a.acting(for: .daemon).isEmailTaken("x\(index)@example.com") { _ in answers += 1 }
        }
        pair.a.stop()
        try pair.harness.run(until: { answers == 20 })
        #expect(pair.a.knownUsernameTaken("any") == nil)
    }

    @Test func anOutageAnswersUnavailableAtOnceKeepsTheDirectoryAndEndsByItself() throws {
        let cluster = try PostgresTestCluster()
        defer { cluster.destroy() }
        try cluster.psql("CREATE DATABASE outage")
        let harness = try LoopHarness()
        let storage = try PostgreSQLStorage.open(settings: PostgreSQLSettings(conninfo: cluster.conninfo(database: "outage"),
                                                                              connections: 2),
                                                 loop: harness.loop, server: ServerSettings(), cores: 2,
                                                 clock: ManualWallClock(), logger: Logger(level: .crit))
        defer { storage.stop() }
        var states: [StorageState.Phase] = []
        var heard: [StorageChange] = []
        storage.onStateChange = { states.append($0.phase) }
        storage.onChange = { heard.append($0) }
        storage.warmUp()
        _ = try harness.answer { storage.acting(for: .daemon).createAccount(NewAccount(username: "kept01", display: "kept01", email: nil,
                                                                                      passwordHash: placeholderHash),
                                                                           completion: $0) }.get()
        try harness.run(until: { storage.knownUsernameTaken("nobody") != nil })

        cluster.stopImmediately()
        try harness.run(until: { storage.state.phase == .down }, within: .seconds(20))
        #expect(states.last == .down)
        let started = harness.loop.now
        let answer = try harness.answer { storage.acting(for: .daemon).isEmailTaken("a@example.com", completion: $0) }
        guard case .failure(.unavailable) = answer else { Issue.record("answered \(answer)"); return }
        #expect(harness.loop.now - started < .milliseconds(100))
        // Username checks keep answering from memory.
        #expect(storage.knownUsernameTaken("KEPT01") == true)
        #expect(try harness.answer { storage.acting(for: .daemon).isUsernameTaken("kept01", completion: $0) }.get())
        let statistics = try harness.answer { storage.statistics(completion: $0) }.get()
        #expect(statistics.state.phase == .down && statistics.accounts == 1)

        try cluster.start()
        try harness.run(until: { storage.state.phase == .up && heard.contains(.resync) }, within: .seconds(30))
        #expect(states.last == .up)
        #expect(try harness.answer { storage.acting(for: .daemon).isEmailTaken("a@example.com",
                                                                               completion: $0) }.get() == false)
    }
}

/// PostgreSQL's text holds no NUL, and libpq would cut a value at one: such a write is refused whole, never
/// stored shortened.
@Suite("PostgreSQL text without NUL")
struct PostgreSQLNULTests {
    @Test func aValueHoldingANULIsRefusedNotCutShort() throws {
        let harness = try LoopHarness()
        let storage = try PostgreSQLStorage.open(settings: PostgreSQLSettings(conninfo: try PostgresTestCluster.shared.createDatabase(),
                                                                              connections: 1),
                                                 loop: harness.loop, server: ServerSettings(), cores: 2,
                                                 clock: ManualWallClock(), logger: Logger(level: .crit))
        defer { storage.stop() }
        let hash = "$argon2id$v=19$m=8192,t=1,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA"
        let owner = try harness.answer { storage.acting(for: .daemon).createAccount(NewAccount(username: "owner1", display: "owner1", email: nil,
                                                                                               passwordHash: hash),
                                                                                    completion: $0) }.get()
        #expect(try harness.answer { storage.acting(for: .daemon).createAccount(NewAccount(username: "nul01", display: "nul\u{0}01", email: nil,
                                                                                           passwordHash: hash),
                                                                                completion: $0) }.map(\.id) == .failure(.other))
        let added = try harness.answer { storage.acting(for: .daemon).addContact(ContactDraft(name: "A\u{0}B"),
                for: owner.id, completion: $0) }
        #expect(added.map(\.contact.id) == .failure(.other))
        let kept = try harness.answer { storage.acting(for: .daemon).addContact(ContactDraft(name: "Kept"),
                                                                                for: owner.id, completion: $0) }.get()
        let patched = try harness.answer {
            storage.acting(for: .daemon).updateContact(kept.contact.id, of: owner.id,
                                                       with: ContactPatch(name: nil, phone: nil, email: nil, note: "x\u{0}y"),
                                                       completion: $0)
        }
        #expect(patched == .failure(.other))
        let imported = try harness.answer { storage.acting(for: .daemon).importContacts("name\nFine\n\"Cut\u{0}Here\"\n",
                format: .csv, for: owner.id, completion: $0) }
        #expect(imported.map(\.skipped) == .failure(.other))
        let all = try harness.answer { storage.acting(for: .daemon).readContacts([kept.contact.id], of: owner.id,
                cancelled: Locked(false), encode: { $0 }, completion: $0) }.get()
        #expect(all == [kept.contact])
        #expect(try harness.answer { storage.acting(for: .daemon).loadSearchIndex(of: owner.id, build: { $0.count },
                completion: $0) }.get() == 1)
    }
}
