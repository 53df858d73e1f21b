import RosterCore
import RosterRuntime
import RosterStorage
import Testing

/// Passkeys and user handles (protocol.md §Storage), alike on every backend, every time given: an account's handle
/// is made once and then the same on every instance, and finds its account; a credential id is one account's, at
/// most `limit` of them an account; a passkey comes back as it was stored, with the backend's time, oldest first;
/// only its owner removes it; its sign count only moves forward (both 0, or up), and a refused log-in changes
/// nothing; a deletion takes the account's passkeys and handle, freeing both; an entry (and a removal's mail)
/// commits only with the write that succeeded.
@Suite("Storage contract: passkeys")
struct PasskeyContractTests {
    private func bytes(_ byte: UInt8, _ count: Int = 32) -> [UInt8] { [UInt8](repeating: byte, count: count) }

    /// A passkey of `account` whose credential id is `id`'s bytes, with a caller's time the backend must ignore.
    private func passkey(_ id: [UInt8], of account: Account, signCount: UInt32 = 0, transports: [String] = ["usb"],
                         name: String = "key") -> StoredPasskey {
        StoredPasskey(credentialID: id, account: account.id, algorithm: -7, publicKey: bytes(9, 64), signCount: signCount,
                      transports: transports, name: name, createdMs: 123, lastUsedMs: 456)
    }

    private func add(_ passkey: StoredPasskey, limit: Int = PasskeyLimits.perAccount, audit: AuditRecord? = nil,
                     on storage: (any Storage)? = nil, _ backend: Backend) throws -> PasskeyAddition {
        try backend.value { (storage ?? backend.storage).acting(for: charge(passkey.account)).addPasskey(passkey,
                limit: limit, audit: audit, completion: $0) }
    }

    private func list(_ account: Account, on storage: (any Storage)? = nil, _ backend: Backend) throws -> [StoredPasskey] {
        try backend.value { (storage ?? backend.storage).acting(for: charge(account.id)).passkeys(of: account.id,
                                                                                                  completion: $0) }
    }

    private func find(_ id: [UInt8], _ backend: Backend) throws -> OwnedPasskey? {
        try backend.value { backend.storage.acting(for: peerCharge).passkey(credentialID: id, completion: $0) }
    }

    private func remove(_ id: [UInt8], of account: Account, audit: AuditRecord? = nil, mail: [QueuedMail] = [],
                        _ backend: Backend) throws -> Bool {
        try backend.value { backend.storage.acting(for: charge(account.id)).removePasskey(of: account.id, credentialID: id,
                audit: audit, mail: mail, completion: $0) }
    }

    private func use(_ id: [UInt8], _ signCount: UInt32, atMs usedMs: Int64, on storage: (any Storage)? = nil,
                     _ backend: Backend) throws -> PasskeyUse {
        try backend.value { (storage ?? backend.storage).acting(for: peerCharge).usePasskey(credentialID: id,
                signCount: signCount, usedMs: usedMs, completion: $0) }
    }

    private func handle(of account: Account, candidate: [UInt8], on storage: (any Storage)? = nil,
                        _ backend: Backend) throws -> [UInt8]? {
        try backend.value { (storage ?? backend.storage).acting(for: charge(account.id)).passkeyUserHandle(of: account.id,
                candidate: candidate, completion: $0) }
    }

    private func owner(ofHandle handle: [UInt8], _ backend: Backend) throws -> Account? {
        try backend.value { backend.storage.acting(for: peerCharge).account(forUserHandle: handle, completion: $0) }
    }

    private func delete(_ account: Account, _ backend: Backend) throws {
        _ = try backend.value { backend.storage.acting(for: .daemon).deleteAccount(account.id, failureKeys: [],
                                                                                   completion: $0) }
    }

    private func log(_ backend: Backend) throws -> [AuditEntry] {
        try backend.value { backend.storage.acting(for: .daemon).auditEntries(AuditQuery(limit: 100), completion: $0) }
    }

    private func entry(_ event: AuditEvent, _ username: String) -> AuditRecord {
        AuditRecord(event: event, username: username, peer: AuditPeer(uid: 1_000, pid: 42, client: "roster-web"))
    }

    // MARK: The user handle

    @Test(arguments: BackendKind.allCases)
    func anAccountsHandleIsMadeOnceAndFindsItsAccount(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let alice = try backend.account("alice1")
        let bob = try backend.account("bobby1")
        #expect(try handle(of: alice, candidate: bytes(1), backend) == bytes(1))
        #expect(try handle(of: alice, candidate: bytes(2), backend) == bytes(1), "a second candidate is not stored")
        #expect(try handle(of: bob, candidate: bytes(3), backend) == bytes(3))
        #expect(try owner(ofHandle: bytes(1), backend) == alice)
        #expect(try owner(ofHandle: bytes(3), backend) == bob)
        #expect(try owner(ofHandle: bytes(2), backend) == nil)
        #expect(try owner(ofHandle: [], backend) == nil)
        // Durable and the same for another instance, which finds the handle made already.
        let reopened = try backend.reopened()
        #expect(try handle(of: alice, candidate: bytes(4), on: reopened, backend) == bytes(1))
        // A handle another account holds is refused, not shared; a handle of no WebAuthn size is refused.
        let carol = try backend.account("carol1")
        #expect(try backend.answer { backend.storage.acting(for: charge(carol.id)).passkeyUserHandle(of: carol.id,
                candidate: bytes(1), completion: $0) } == .failure(.other))
        for size in [0, 65] {
            #expect(try backend.answer { backend.storage.acting(for: charge(carol.id)).passkeyUserHandle(of: carol.id,
                    candidate: bytes(5, size), completion: $0) } == .failure(.other))
        }
        #expect(try handle(of: carol, candidate: bytes(5, 64), backend) == bytes(5, 64))
        // An account that is gone has none, and none is made for it.
        try delete(bob, backend)
        #expect(try handle(of: bob, candidate: bytes(6), backend) == nil)
        #expect(try owner(ofHandle: bytes(6), backend) == nil)
    }

    // MARK: Adding and listing

    @Test(arguments: BackendKind.allCases)
    func passkeysComeBackAsStoredOldestFirstWithTheBackendsTime(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let alice = try backend.account("alice1")
        let bob = try backend.account("bobby1")
        // Transports as a client may send them: each must come back as it went, whatever it holds.
        let odd = ["usb", "", "a,b", "say \"hi\"", "back\\slash", "nul\u{0}tab\t", "[]", "키", "\u{7F}\u{1F600}"]
        let first = passkey(bytes(3, 16), of: alice, signCount: 7, transports: odd, name: "Alice's \"YubiKey\"")
        let t0 = backend.clock.nowMs()
        guard case .added(let stored) = try add(first, backend) else {
            Issue.record("the first passkey was not added")
            return
        }
        var expected = first
        expected.createdMs = t0
        expected.lastUsedMs = nil
        #expect(stored == expected, "the backend's time, no last use, everything else as given")
        backend.clock.advance(byMs: 1_000)
        let second = try add(passkey(bytes(1, 1), of: alice, transports: [], name: ""), backend)
        // Two at one instant are ordered by credential id.
        let third = try add(passkey(bytes(2, 1_023), of: alice, transports: ["internal", "hybrid"]), backend)
        let fourth = try add(passkey(bytes(0, 1_023), of: alice), backend)
        _ = try add(passkey(bytes(4), of: bob), backend)
        let listed = try list(alice, backend)
        #expect(listed.map(\.credentialID) == [bytes(3, 16), bytes(0, 1_023), bytes(1, 1), bytes(2, 1_023)])
        #expect(listed.map(\.createdMs) == [t0, t0 + 1_000, t0 + 1_000, t0 + 1_000])
        #expect([second, third, fourth].allSatisfy { $0.isAdded })
        #expect(listed.first == expected)
        #expect(listed.last?.transports == ["internal", "hybrid"])
        #expect(listed.dropFirst(2).first?.transports == [])
        #expect(try list(bob, backend).map(\.credentialID) == [bytes(4)])
        // Found by its credential id alone, with its owner as a log-in needs it (locked or not).
        _ = try backend.value { backend.storage.acting(for: .daemon).lockAccount(alice.id, reason: "lost", completion: $0) }
        let found = try find(bytes(3, 16), backend)
        #expect(found?.passkey == expected)
        #expect(found?.account.username == "alice1" && found?.account.locked == true)
        #expect(try find(bytes(3, 15), backend) == nil)
        // Durable: another instance finds them all as they were answered.
        #expect(try list(alice, on: try backend.reopened(), backend) == listed)
    }

    @Test(arguments: BackendKind.allCases)
    func aCredentialIDIsOneAccountsAndAPasskeyNeedsAnIDAndAKey(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let alice = try backend.account("alice1")
        let bob = try backend.account("bobby1")
        #expect(try add(passkey(bytes(1), of: alice), backend).isAdded)
        #expect(try add(passkey(bytes(1), of: bob, name: "bob's"), backend) == .duplicate)
        #expect(try add(passkey(bytes(1), of: alice, name: "again"), backend) == .duplicate)
        #expect(try list(bob, backend) == [])
        #expect(try list(alice, backend).map(\.name) == ["key"])
        for refused in [passkey([], of: alice), passkey(bytes(2, 1_024), of: alice),
                        StoredPasskey(credentialID: bytes(3), account: alice.id, algorithm: -8, publicKey: [], signCount: 0,
                                      transports: [], name: "no key")] {
            #expect(try backend.answer { backend.storage.acting(for: charge(alice.id)).addPasskey(refused,
                    limit: PasskeyLimits.perAccount, audit: nil, completion: $0) } == .failure(.other))
        }
        #expect(try list(alice, backend).count == 1)
    }

    @Test(arguments: BackendKind.allCases)
    func anAccountHoldsAtMostTheLimit(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let alice = try backend.account("alice1")
        let bob = try backend.account("bobby1")
        let limit = PasskeyLimits.perAccount
        for index in 0..<limit {
            #expect(try add(passkey(bytes(UInt8(index)), of: alice), backend).isAdded, "passkey \(index)")
        }
        #expect(try add(passkey(bytes(200), of: alice), backend) == .full)
        // A stored id is a duplicate even at the cap; another account has its own cap.
        #expect(try add(passkey(bytes(0), of: alice), backend) == .duplicate)
        #expect(try add(passkey(bytes(200), of: bob), backend).isAdded)
        #expect(try list(alice, backend).count == limit)
        // A removal makes room for one.
        #expect(try remove(bytes(5), of: alice, backend))
        #expect(try add(passkey(bytes(201), of: alice), backend).isAdded)
        #expect(try add(passkey(bytes(202), of: alice), backend) == .full)
        // The limit is the caller's: a smaller one counts what is stored.
        #expect(try add(passkey(bytes(203), of: bob), limit: 1, backend) == .full)
        #expect(try add(passkey(bytes(203), of: bob), limit: 2, backend).isAdded)
        // An account that is gone adds nothing, whatever else holds.
        try delete(bob, backend)
        #expect(try add(passkey(bytes(204), of: bob), backend) == .gone)
        #expect(try add(passkey(bytes(0), of: bob), backend) == .gone)
    }

    @Test(arguments: BackendKind.allCases)
    func aPasskeyTheDiskCannotHoldIsNotStoredNorItsEntry(_ kind: BackendKind) throws {
        let backend = try kind.make(rowLimit: 24)
        let alice = try backend.account("alice1")
        var full = false
        for index in 0..<400 where !full {
            let added = try backend.answer {
                backend.storage.acting(for: charge(alice.id)).addContact(ContactDraft(name: "Filler \(index)",
                                                                                      note: String(repeating: "x", count: 3_900)),
                                                                         for: alice.id, completion: $0)
            }
            full = (try? added.get()) == nil
        }
        #expect(full)
        var large = passkey(bytes(1), of: alice)
        large.publicKey = bytes(7, 64 * 1_024)
        #expect(try backend.answer { backend.storage.acting(for: charge(alice.id)).addPasskey(large,
                limit: PasskeyLimits.perAccount, audit: entry(.passkeyAdded, "alice1"), completion: $0) } == .failure(.full))
        #expect(try list(alice, backend) == [])
        #expect(try log(backend) == [])
    }

    // MARK: Removing

    @Test(arguments: BackendKind.allCases)
    func onlyItsOwnerRemovesAPasskey(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let alice = try backend.account("alice1")
        let bob = try backend.account("bobby1")
        _ = try add(passkey(bytes(1), of: alice), backend)
        _ = try add(passkey(bytes(2), of: alice), backend)
        #expect(try !remove(bytes(1), of: bob, backend), "another account's id is not there")
        #expect(try find(bytes(1), backend) != nil)
        #expect(try remove(bytes(1), of: alice, backend))
        #expect(try !remove(bytes(1), of: alice, backend))
        #expect(try find(bytes(1), backend) == nil)
        #expect(try list(alice, backend).map(\.credentialID) == [bytes(2)])
        #expect(try use(bytes(1), 1, atMs: 5, backend) == .gone)
    }

    // MARK: The sign count

    @Test(arguments: BackendKind.allCases)
    func theSignCountOnlyMovesForward(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let alice = try backend.account("alice1")
        let none = bytes(1)
        let counting = bytes(2)
        _ = try add(passkey(none, of: alice, signCount: 0), backend)
        _ = try add(passkey(counting, of: alice, signCount: 10), backend)
        // An authenticator that keeps no count: 0 after 0 again and again.
        guard case .used(let used) = try use(none, 0, atMs: 1_000, backend) else {
            Issue.record("0 after 0 was refused")
            return
        }
        #expect(used.signCount == 0 && used.lastUsedMs == 1_000 && used.credentialID == none && used.name == "key")
        #expect(try use(none, 0, atMs: 2_000, backend) == .used(with(used, count: 0, at: 2_000)))
        // One that starts counting, then must keep counting up.
        #expect(try use(none, 5, atMs: 3_000, backend) == .used(with(used, count: 5, at: 3_000)))
        #expect(try use(none, 0, atMs: 4_000, backend) == .counterWentBack(stored: 5))
        // An equal count, a lower one, and 0 after a count are refused, and change nothing.
        let before = try find(counting, backend)?.passkey
        for refused: UInt32 in [10, 9, 0] {
            #expect(try use(counting, refused, atMs: 5_000, backend) == .counterWentBack(stored: 10), "\(refused)")
        }
        #expect(try find(counting, backend)?.passkey == before)
        #expect(before?.lastUsedMs == nil)
        if let before {
            #expect(try use(counting, 11, atMs: 6_000, backend) == .used(with(before, count: 11, at: 6_000)))
            #expect(try use(counting, .max, atMs: 7_000, backend) == .used(with(before, count: .max, at: 7_000)))
        }
        #expect(try use(counting, .max, atMs: 8_000, backend) == .counterWentBack(stored: .max))
        // What a log-in stored, another instance finds.
        let reopened = try backend.reopened()
        #expect(try list(alice, on: reopened, backend).map(\.signCount) == [5, .max])
        #expect(try list(alice, on: reopened, backend).map(\.lastUsedMs) == [3_000, 7_000])
        #expect(try use(bytes(3), 1, atMs: 9_000, backend) == .gone)
    }

    private func with(_ passkey: StoredPasskey, count: UInt32, at usedMs: Int64) -> StoredPasskey {
        var used = passkey
        used.signCount = count
        used.lastUsedMs = usedMs
        return used
    }

    // MARK: Deletion

    @Test(arguments: BackendKind.allCases)
    func aDeletionTakesThePasskeysAndTheHandleAndFreesBoth(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let alice = try backend.account("alice1")
        let bob = try backend.account("bobby1")
        _ = try handle(of: alice, candidate: bytes(7), backend)
        _ = try add(passkey(bytes(1), of: alice), backend)
        _ = try add(passkey(bytes(2), of: alice), backend)
        _ = try add(passkey(bytes(3), of: bob), backend)
        try delete(alice, backend)
        #expect(try find(bytes(1), backend) == nil && find(bytes(2), backend) == nil)
        #expect(try list(alice, backend) == [])
        #expect(try owner(ofHandle: bytes(7), backend) == nil)
        #expect(try use(bytes(1), 1, atMs: 1, backend) == .gone)
        #expect(try list(bob, backend).map(\.credentialID) == [bytes(3)], "another account's stay")
        // The credential id and the handle may be another account's now.
        #expect(try add(passkey(bytes(1), of: bob), backend).isAdded)
        #expect(try handle(of: bob, candidate: bytes(7), backend) == bytes(7))
        #expect(try owner(ofHandle: bytes(7), backend) == bob)
        // A name registered again is a new account, with none of the old one's.
        let again = try backend.account("alice1")
        #expect(try list(again, backend) == [])
        #expect(try handle(of: again, candidate: bytes(8), backend) == bytes(8))
    }

    // MARK: Entries and mail

    @Test(arguments: BackendKind.allCases)
    func entriesAndMailCommitOnlyWithTheWriteThatSucceeded(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let alice = try backend.account("alice1", email: "alice@example.com")
        let bob = try backend.account("bobby1")
        let added = entry(.passkeyAdded, "alice1")
        let removed = entry(.passkeyRemoved, "alice1")
        let notice = QueuedMail(account: alice.id, kind: .passwordChanged, recipient: "alice@example.com",
                                sealedMessage: [1, 2, 3])
        #expect(try add(passkey(bytes(1), of: alice), limit: 2, audit: added, backend).isAdded)
        #expect(try add(passkey(bytes(1), of: alice), limit: 2, audit: added, backend) == .duplicate)
        #expect(try add(passkey(bytes(2), of: alice), limit: 2, audit: added, backend).isAdded)
        #expect(try add(passkey(bytes(3), of: alice), limit: 2, audit: added, backend) == .full)
        try delete(bob, backend)
        #expect(try add(passkey(bytes(4), of: bob), audit: entry(.passkeyAdded, "bobby1"), backend) == .gone)
        #expect(try !remove(bytes(9), of: alice, audit: removed, mail: [notice], backend))
        #expect(try !remove(bytes(2), of: bob, audit: removed, mail: [notice], backend))
        #expect(try backend.value { backend.storage.acting(for: .daemon).listMail(status: nil, limit: 10,
                                                                                  completion: $0) } == [])
        #expect(try remove(bytes(1), of: alice, audit: removed, mail: [notice], backend))
        let entries = try log(backend).reversed().map(\.record)
        #expect(entries == [added, added, removed, removed.mailQueued(.passwordChanged)])
        #expect(backend.heard.entries.map(\.entry.record) == entries)
        #expect(backend.heard.entries.allSatisfy { $0.origin == .here })
        let mails = try backend.value { backend.storage.acting(for: .daemon).listMail(status: nil, limit: 10, completion: $0) }
        #expect(mails.map(\.account) == [alice.id] && mails.map(\.kind) == [.passwordChanged])
    }

    // MARK: Two daemons on one PostgreSQL

    @Test func twoDaemonsAddingAtOnceStayWithinTheCapAndOneIDGoesToOneAccount() throws {
        let backend = try BackendKind.postgres.make()
        let other = try backend.reopened()
        let alice = try backend.account("alice1")
        let bob = try backend.account("bobby1")
        let limit = PasskeyLimits.perAccount
        var answers: [PasskeyAddition] = []
        // Fifteen on each daemon at once, all asked before any is answered.
        for index in 0..<30 {
            let daemon = index.isMultiple(of: 2) ? backend.storage : other
            daemon.acting(for: charge(alice.id)).addPasskey(passkey(bytes(UInt8(index)), of: alice), limit: limit,
                                                            audit: entry(.passkeyAdded, "alice1"),
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
        // One credential id for two accounts on two daemons at once: one gets it.
        var raced: [PasskeyAddition] = []
        for (daemon, account) in [(backend.storage, bob), (other, alice), (backend.storage, alice), (other, bob)] {
            daemon.acting(for: charge(account.id)).addPasskey(passkey(bytes(100), of: account), limit: limit + 10,
                                                              audit: nil, completion: backend.completion { result in
                raced.append((try? result.get()) ?? .gone)
            })
        }
        try backend.run(until: { raced.count == 4 })
        #expect(raced.filter { $0.isAdded }.count == 1)
        #expect(raced.filter { $0 == .duplicate }.count == 3)
    }

    @Test func twoDaemonsRecordingOneCountAtOnceRecordItOnce() throws {
        let backend = try BackendKind.postgres.make()
        let other = try backend.reopened()
        let alice = try backend.account("alice1")
        _ = try add(passkey(bytes(1), of: alice, signCount: 1), backend)
        for count: UInt32 in 2...6 {
            var answers: [PasskeyUse] = []
            for (index, daemon) in [backend.storage, other, backend.storage, other].enumerated() {
                daemon.acting(for: peerCharge).usePasskey(credentialID: bytes(1), signCount: count, usedMs: Int64(index),
                                                          completion: backend.completion { result in
                    answers.append((try? result.get()) ?? .gone)
                })
            }
            try backend.run(until: { answers.count == 4 })
            let used = answers.compactMap { answer -> StoredPasskey? in
                if case .used(let passkey) = answer { passkey } else { nil }
            }
            #expect(used.map(\.signCount) == [count], "count \(count)")
            #expect(answers.filter { $0 == .counterWentBack(stored: count - 1) || $0 == .counterWentBack(stored: count) }
                        .count == 3)
        }
        #expect(try find(bytes(1), backend)?.passkey.signCount == 6)
    }

    @Test func twoDaemonsMakingOneAccountsHandleAtOnceAgreeOnIt() throws {
        let backend = try BackendKind.postgres.make()
        let other = try backend.reopened()
        let alice = try backend.account("alice1")
        var answers: [[UInt8]?] = []
        for (index, daemon) in [backend.storage, other, backend.storage, other].enumerated() {
            daemon.acting(for: charge(alice.id)).passkeyUserHandle(of: alice.id, candidate: bytes(UInt8(index + 1)),
                                                                   completion: backend.completion { result in
                if case .failure(let failure) = result { Issue.record("a handle failed: \(failure)") }
                answers.append((try? result.get()) ?? nil)
            })
        }
        try backend.run(until: { answers.count == 4 })
        let stored = try handle(of: alice, candidate: bytes(9), backend)
        #expect(stored != nil)
        #expect(answers.allSatisfy { $0 == stored })
    }
}
