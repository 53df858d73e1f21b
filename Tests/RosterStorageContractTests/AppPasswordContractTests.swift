import RosterCore
import RosterRuntime
import RosterStorage
import Testing

/// App passwords (protocol.md "App passwords"), alike on every backend: one comes back as it was stored, with the
/// backend's time, oldest first, and at most `limit` of them an account (held by two daemons at once); only its
/// owner removes or touches it; a deletion takes them; an entry commits only with the write that succeeded.
@Suite("Storage contract: app passwords")
struct AppPasswordContractTests {
    private func hash(_ byte: UInt8) -> [UInt8] { [UInt8](repeating: byte, count: AppPasswordLimits.hashBytes) }

    /// An app password of `account` with a caller's times the backend must ignore.
    private func appPassword(_ id: String, of account: Account, name: String = "Thunderbird",
                             hash byte: UInt8 = 1) -> StoredAppPassword {
        StoredAppPassword(id: id, account: account.id, name: name, hash: hash(byte), createdMs: 123, lastUsedMs: 456)
    }

    private func add(_ appPassword: StoredAppPassword, limit: Int = AppPasswordLimits.perAccount,
                     audit: AuditRecord? = nil, _ backend: Backend) throws -> AppPasswordAddition {
        try backend.value { backend.storage.acting(for: charge(appPassword.account)).addAppPassword(appPassword,
                limit: limit, audit: audit, completion: $0) }
    }

    private func list(_ account: Account, on storage: (any Storage)? = nil,
                      _ backend: Backend) throws -> [StoredAppPassword] {
        try backend.value { (storage ?? backend.storage).acting(for: charge(account.id)).appPasswords(of: account.id,
                                                                                                      completion: $0) }
    }

    private func remove(_ id: String, of account: Account, audit: AuditRecord? = nil, _ backend: Backend) throws -> Bool {
        try backend.value { backend.storage.acting(for: charge(account.id)).removeAppPassword(of: account.id, id: id,
                audit: audit, completion: $0) }
    }

    private func touch(_ id: String, of account: Account, atMs usedMs: Int64, _ backend: Backend) throws -> Bool {
        try backend.value { backend.storage.acting(for: peerCharge).touchAppPassword(of: account.id, id: id,
                usedMs: usedMs, completion: $0) }
    }

    private func log(_ backend: Backend) throws -> [AuditEntry] {
        try backend.value { backend.storage.acting(for: .daemon).auditEntries(AuditQuery(limit: 100), completion: $0) }
    }

    private func entry(_ event: AuditEvent, _ username: String) -> AuditRecord {
        AuditRecord(event: event, username: username, peer: AuditPeer(uid: 1_000, pid: 42, client: "roster-web"))
    }

    @Test(arguments: BackendKind.allCases)
    func anAppPasswordComesBackAsStoredWithTheBackendsTimeOldestFirst(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let alice = try backend.account("alice1")
        let bob = try backend.account("bobby1")
        let t0 = backend.clock.nowMs()
        guard case .added(let first) = try add(appPassword("bbbb", of: alice, name: "DAVx5 — 手机", hash: 1), backend) else {
            Issue.record("not added")
            return
        }
        #expect(first.id == "bbbb" && first.account == alice.id && first.name == "DAVx5 — 手机" && first.hash == hash(1))
        #expect(first.createdMs == t0 && first.lastUsedMs == nil, "the backend's time, never the caller's")
        backend.clock.advance(byMs: 1_000)
        #expect(try add(appPassword("aaaa", of: alice, hash: 2), backend).isAdded)
        _ = try add(appPassword("cccc", of: bob, hash: 3), backend)
        let listed = try list(alice, backend)
        #expect(listed.map(\.id) == ["bbbb", "aaaa"], "oldest first, whatever the ids")
        #expect(listed.first == first)
        #expect(try list(alice, on: try backend.reopened(), backend) == listed, "another instance reads the same")
        #expect(try list(bob, backend).map(\.id) == ["cccc"])
    }

    @Test(arguments: BackendKind.allCases)
    func anAccountHoldsAtMostTheLimitAndAGoneOneNone(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let alice = try backend.account("alice1")
        let bob = try backend.account("bobby1")
        let limit = AppPasswordLimits.perAccount
        for index in 0..<limit { #expect(try add(appPassword("a\(index)", of: alice), backend).isAdded) }
        #expect(try add(appPassword("over", of: alice), backend) == .full)
        #expect(try list(alice, backend).count == limit)
        #expect(try remove("a5", of: alice, backend))
        #expect(try add(appPassword("again", of: alice), backend).isAdded)
        #expect(try add(appPassword("over", of: alice), backend) == .full)
        #expect(try add(appPassword("b1", of: bob), limit: 1, backend).isAdded)
        #expect(try add(appPassword("b2", of: bob), limit: 1, backend) == .full)
        _ = try backend.value { backend.storage.acting(for: .daemon).deleteAccount(bob.id, failureKeys: [], completion: $0) }
        #expect(try add(appPassword("b3", of: bob), backend) == .gone)
    }

    @Test(arguments: BackendKind.allCases)
    func onlyItsOwnerRemovesOrTouchesOneAndADeletionTakesThem(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let alice = try backend.account("alice1")
        let bob = try backend.account("bobby1")
        _ = try add(appPassword("a1", of: alice), backend)
        _ = try add(appPassword("a2", of: alice), backend)
        _ = try add(appPassword("b1", of: bob), backend)
        #expect(try !remove("a1", of: bob, backend), "another account's id is not there")
        #expect(try !touch("a1", of: bob, atMs: 5, backend))
        #expect(try touch("a1", of: alice, atMs: 7_000, backend))
        #expect(try list(alice, backend).map(\.lastUsedMs) == [7_000, nil])
        #expect(try remove("a1", of: alice, backend))
        #expect(try !remove("a1", of: alice, backend))
        #expect(try !touch("a1", of: alice, atMs: 8_000, backend))
        _ = try backend.value { backend.storage.acting(for: .daemon).deleteAccount(alice.id, failureKeys: [], completion: $0) }
        #expect(try list(alice, backend) == [])
        #expect(try list(bob, backend).map(\.id) == ["b1"], "another account's stay")
        // An id freed by the deletion may be another account's now.
        #expect(try add(appPassword("a2", of: bob), backend).isAdded)
    }

    @Test(arguments: BackendKind.allCases)
    func whatNoBackendMayStoreIsRefusedAndEntriesCommitOnlyWithTheWrite(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let alice = try backend.account("alice1")
        var short = appPassword("x", of: alice)
        short.hash = [1, 2, 3]
        #expect(try backend.answer { backend.storage.acting(for: charge(alice.id)).addAppPassword(short, limit: 20,
                audit: entry(.appPasswordAdded, "alice1"), completion: $0) } == .failure(.other))
        #expect(try backend.answer { backend.storage.acting(for: charge(alice.id)).addAppPassword(
            appPassword("", of: alice), limit: 20, audit: nil, completion: $0) } == .failure(.other))
        let added = entry(.appPasswordAdded, "alice1")
        let removed = entry(.appPasswordRemoved, "alice1")
        #expect(try add(appPassword("a1", of: alice), limit: 1, audit: added, backend).isAdded)
        #expect(try add(appPassword("a2", of: alice), limit: 1, audit: added, backend) == .full)
        #expect(try !remove("nope", of: alice, audit: removed, backend))
        #expect(try remove("a1", of: alice, audit: removed, backend))
        let entries = try log(backend).reversed().map(\.record)
        #expect(entries == [added, removed])
        #expect(backend.heard.entries.map(\.entry.record) == entries)
    }

    // MARK: Two daemons on one PostgreSQL

    @Test func twoDaemonsAddingAtOnceStayWithinTheCap() throws {
        let backend = try BackendKind.postgres.make()
        let other = try backend.reopened()
        let alice = try backend.account("alice1")
        let limit = AppPasswordLimits.perAccount
        var answers: [AppPasswordAddition] = []
        // Fifteen on each daemon at once, all asked before any is answered.
        for index in 0..<30 {
            let daemon = index.isMultiple(of: 2) ? backend.storage : other
            daemon.acting(for: charge(alice.id)).addAppPassword(appPassword("id\(index)", of: alice), limit: limit,
                                                                audit: entry(.appPasswordAdded, "alice1"),
                                                                completion: backend.completion { result in
                if case .failure(let failure) = result { Issue.record("an addition failed: \(failure)") }
                answers.append((try? result.get()) ?? .gone)
            })
        }
        try backend.run(until: { answers.count == 30 })
        #expect(answers.filter { $0.isAdded }.count == limit)
        #expect(answers.filter { $0 == .full }.count == 30 - limit)
        #expect(try list(alice, backend).count == limit)
        #expect(try log(backend).count == limit, "an entry for each added one, none for the others")
    }
}
