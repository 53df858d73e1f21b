import RosterCore
import RosterRuntime
import RosterStorage
import Testing

extension BackendKind {
    /// The backends whose audit log these tests run on: every one.
    static let withAuditLog: [BackendKind] = allCases
}

/// The audit log (protocol.md §The audit log), alike on every backend: each audited write commits exactly its entry, with the
/// record as given, the backend's time and an id past every earlier one, and only when it changed something; a
/// nil entry writes none; the backend tells `onAudit` of each entry once, as `.here`, once it is committed and by
/// the time the write answers; queries answer newest first through every filter; pruning removes only older
/// entries; ids are never reused.
@Suite("Storage contract: audit log")
struct AuditContractTests {
    private static let newHash = "$argon2id$v=19$m=19456,t=2,p=1$bmV3c2FsdA$bmV3aGFzaA"
    private static let twelveHours: Int64 = 12 * 3_600 * 1_000
    /// A uid past Int32, a client name and the remote a gateway spoke for: each field must come back as it went in.
    private static let peer = AuditPeer(uid: 4_294_967_294, pid: 4_242, client: "rosterctl", remote: "2001:db8::5")
    /// A connection that speaks for itself: no client, no remote, and each must come back nil.
    private static let otherPeer = AuditPeer(uid: 0, pid: 1, client: nil)

    private func token(_ byte: UInt8) -> [UInt8] { [UInt8](repeating: byte, count: 32) }

    private func record(_ event: AuditEvent, _ username: String? = "alice1", outcome: AuditOutcome = .succeeded,
                        reason: String? = nil, suppressed: Int = 0, peer: AuditPeer = Self.peer) -> AuditRecord {
        AuditRecord(event: event, username: username, peer: peer, outcome: outcome, reason: reason, suppressed: suppressed)
    }

    // MARK: Entries committed with their change

    @Test(arguments: BackendKind.withAuditLog)
    func everyAuditedWriteCommitsExactlyItsEntry(_ kind: BackendKind) throws {
        let backend = try kind.make()
        try everyAuditedWrite(AuditProbe(backend: backend, withEntries: true))
        let log = try AuditProbe.log(of: backend.storage, backend)
        #expect(log.count == 19)
        #expect(log.map(\.id) == log.map(\.id).sorted(by: >), "ids increase as entries are written")
        // Durable: another instance on the same data finds every entry as it was answered.
        #expect(try AuditProbe.log(of: backend.reopened(), backend) == log)
    }

    @Test(arguments: BackendKind.withAuditLog)
    func writesWithoutAnEntryWriteNone(_ kind: BackendKind) throws {
        let backend = try kind.make()
        try everyAuditedWrite(AuditProbe(backend: backend, withEntries: false))
        #expect(try AuditProbe.log(of: backend.storage, backend) == [])
        #expect(backend.heard.entries == [])
    }

    /// Each of the 16 audited writes once, on one account, each a second after the last.
    private func everyAuditedWrite(_ probe: AuditProbe) throws {
        let backend = probe.backend
        let storage = backend.storage
        let alice = try probe.write(record(.register, peer: Self.otherPeer)) {
            storage.acting(for: peerCharge).createAccount(NewAccount(username: "alice1", display: "Alice", email: "alice@example.com",
                                                                     passwordHash: placeholderHash), audit: $0, completion: $1)
        }
        for byte: UInt8 in [1, 2, 3] {
            try probe.write(record(.login)) {
                storage.acting(for: peerCharge).storeToken(hash: token(byte), for: alice.id, client: "rosterctl",
                                                           audit: $0, completion: $1)
            }
        }
        // The caller knows the account only from the answer: the backend names it.
        let resumed = try probe.write(record(.resume, nil), expecting: record(.resume)) {
            storage.acting(for: peerCharge).resumeToken(hash: token(1), idleLimitMs: Self.twelveHours, audit: $0,
                                                        completion: $1)
        }
        #expect(resumed?.id == alice.id)
        try probe.write(record(.login, outcome: .failed, reason: "wrong_password", suppressed: 3)) {
            storage.acting(for: peerCharge).recordFailure(keys: ["account:alice1", "uid:1000"], audit: $0,
                                                          completion: $1)
        }
        try probe.write(record(.login, nil, outcome: .failed, reason: "unknown_user")) {
            storage.acting(for: peerCharge).recordFailure(keys: ["uid:1000"], audit: $0, completion: $1)
        }
        let revokedByPassword = try probe.write(record(.passwordChanged)) {
            storage.acting(for: charge(alice.id)).changePassword(of: alice.id, to: Self.newHash, keeping: token(1),
                                                                 audit: $0, completion: $1)
        }
        #expect(Set(revokedByPassword) == [token(2), token(3)])
        let moved = try probe.write(record(.emailChanged)) {
            storage.acting(for: charge(alice.id)).changeEmail(of: alice.id, to: "alice@example.org", audit: $0,
                                                              completion: $1)
        }
        #expect(moved?.email == "alice@example.org")
        try backend.value { storage.acting(for: peerCharge).storeToken(hash: token(4), for: alice.id, client: nil,
                                                                       audit: nil, completion: $0) }
        let revoked = try probe.write(record(.sessionRevoked)) {
            storage.acting(for: charge(alice.id)).revokeTokens(of: alice.id, except: token(1), audit: $0,
                                                               completion: $1)
        }
        #expect(revoked == [token(4)])
        #expect(try probe.write(record(.logout)) {
            storage.acting(for: charge(alice.id)).revokeToken(hash: token(1), audit: $0, completion: $1)
        })
        try probe.write(record(.recoveryCodesCreated)) {
            storage.acting(for: charge(alice.id)).replaceRecoveryCodes(of: alice.id, hashes: [token(5), token(6)],
                                                                       audit: $0, completion: $1)
        }
        #expect(try probe.write(record(.recovered)) {
            storage.acting(for: peerCharge).redeemRecoveryCode(of: alice.id, codeHash: token(5),
                                                               newPasswordHash: Self.newHash, audit: $0, completion: $1)
        } != nil)
        try backend.value { storage.acting(for: charge(alice.id)).storePendingTOTP(of: alice.id, sealed: [1, 2, 3],
                completion: $0) }
        #expect(try probe.write(record(.totpEnabled)) {
            storage.acting(for: charge(alice.id)).confirmTOTP(of: alice.id, step: 7, audit: $0, completion: $1)
        })
        try probe.write(record(.totpDisabled)) {
            storage.acting(for: charge(alice.id)).removeTOTP(of: alice.id, audit: $0, completion: $1)
        }
        #expect(try probe.write(record(.locked, reason: "stolen laptop", peer: Self.otherPeer)) {
            storage.acting(for: .daemon).lockAccount(alice.id, reason: "stolen laptop", audit: $0, completion: $1)
        })
        #expect(try probe.write(record(.unlocked, peer: Self.otherPeer)) {
            storage.acting(for: .daemon).unlockAccount(alice.id, audit: $0, completion: $1)
        })
        try probe.write(record(.failuresReset, peer: Self.otherPeer)) {
            storage.acting(for: .daemon).resetFailures(keys: ["account:alice1"], audit: $0, completion: $1)
        }
        #expect(try probe.write(record(.deleted)) {
            storage.acting(for: charge(alice.id)).deleteAccount(alice.id, failureKeys: ["account:alice1"], audit: $0,
                                                                completion: $1)
        }?.account.id == alice.id)
    }

    // MARK: Writes that change nothing

    @Test(arguments: BackendKind.withAuditLog)
    func aWriteThatChangedNothingOrFailedCommitsNoEntry(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let probe = AuditProbe(backend: backend, withEntries: true)
        let alice = try backend.account("alice1", email: "alice@example.com")
        _ = try backend.account("bobby1", email: "bob@example.com")
        let entry = record(.register, "alice1")

        // Refused writes: a held name or email, a hash the schema refuses, a token for no account.
        #expect(try probe.unchanged(entry) {
            storage.acting(for: peerCharge).createAccount(NewAccount(username: "ALICE1", display: "A", email: nil, passwordHash: placeholderHash),
                                                          audit: $0, completion: $1)
        } == .failure(.conflict(.username)))
        #expect(try probe.unchanged(entry) {
            storage.acting(for: peerCharge).createAccount(NewAccount(username: "carol1", display: "C", email: "BOB@example.com",
                                                                     passwordHash: placeholderHash), audit: $0, completion: $1)
        } == .failure(.conflict(.email)))
        #expect(try probe.unchanged(entry) {
            storage.acting(for: peerCharge).createAccount(NewAccount(username: "carol1", display: "C", email: nil, passwordHash: "plain"),
                                                          audit: $0, completion: $1)
        }.isFailure)
        #expect(try probe.unchanged(record(.login)) {
            storage.acting(for: peerCharge).storeToken(hash: token(1), for: 9_999, client: nil, audit: $0,
                                                       completion: $1)
        }.isFailure)
        #expect(try probe.unchanged(record(.emailChanged)) {
            storage.acting(for: charge(alice.id)).changeEmail(of: alice.id, to: "bob@example.com", audit: $0,
                                                              completion: $1)
        } == .failure(.conflict(.email)))
        #expect(try probe.unchanged(record(.passwordChanged)) {
            storage.acting(for: charge(alice.id)).changePassword(of: alice.id, to: "plain", keeping: nil, audit: $0,
                                                                 completion: $1)
        }.isFailure)

        // Nothing there to change: an unknown token, an unused code, nothing pending.
        #expect(try probe.unchanged(record(.resume)) {
            storage.acting(for: peerCharge).resumeToken(hash: token(9), idleLimitMs: Self.twelveHours, audit: $0,
                                                        completion: $1)
        } == .success(nil))
        #expect(try probe.unchanged(record(.logout)) {
            storage.acting(for: peerCharge).revokeToken(hash: token(9), audit: $0, completion: $1)
        } == .success(false))
        try backend.value { storage.acting(for: charge(alice.id)).replaceRecoveryCodes(of: alice.id, hashes: [token(5)],
                completion: $0) }
        #expect(try probe.unchanged(record(.recovered)) {
            storage.acting(for: peerCharge).redeemRecoveryCode(of: alice.id, codeHash: token(6),
                                                               newPasswordHash: Self.newHash, audit: $0, completion: $1)
        } == .success(nil))
        _ = try backend.value { storage.acting(for: peerCharge).redeemRecoveryCode(of: alice.id, codeHash: token(5),
                newPasswordHash: Self.newHash, completion: $0) }
        #expect(try probe.unchanged(record(.recovered)) {
            storage.acting(for: peerCharge).redeemRecoveryCode(of: alice.id, codeHash: token(5),
                                                               newPasswordHash: Self.newHash, audit: $0, completion: $1)
        } == .success(nil), "a used code")
        #expect(try probe.unchanged(record(.totpEnabled)) {
            storage.acting(for: charge(alice.id)).confirmTOTP(of: alice.id, step: 1, audit: $0, completion: $1)
        } == .success(false))

        // A resume that did not resume an unlocked account: idled out, or locked.
        try backend.value { storage.acting(for: peerCharge).storeToken(hash: token(1), for: alice.id, completion: $0) }
        try backend.value { storage.acting(for: peerCharge).storeToken(hash: token(2), for: alice.id, completion: $0) }
        backend.clock.advance(byMs: 1_000)
        #expect(try probe.unchanged(record(.resume)) {
            storage.acting(for: peerCharge).resumeToken(hash: token(1), idleLimitMs: 1_000, audit: $0, completion: $1)
        } == .success(nil))
        _ = try backend.value { storage.acting(for: .daemon).lockAccount(alice.id, reason: nil, completion: $0) }
        #expect(try probe.unchanged(record(.resume)) {
            storage.acting(for: peerCharge).resumeToken(hash: token(2), idleLimitMs: Self.twelveHours, audit: $0,
                                                        completion: $1)
        }.map { $0?.locked } == .success(true))
    }

    @Test(arguments: BackendKind.withAuditLog)
    func aWriteOnAnAccountThatIsGoneCommitsNoEntry(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let probe = AuditProbe(backend: backend, withEntries: true)
        let gone: AccountID = 9_999
        // What each answers is the account-life and admin contracts' business; here only that nothing is logged.
        _ = try probe.unchanged(record(.passwordChanged)) {
            storage.acting(for: .daemon).changePassword(of: gone, to: Self.newHash, keeping: nil, audit: $0,
                                                        completion: $1)
        }
        #expect(try probe.unchanged(record(.emailChanged)) {
            storage.acting(for: .daemon).changeEmail(of: gone, to: "gone@example.com", audit: $0, completion: $1)
        } == .success(nil))
        #expect(try probe.unchanged(record(.deleted)) {
            storage.acting(for: .daemon).deleteAccount(gone, failureKeys: ["account:gone"], audit: $0, completion: $1)
        } == .success(nil))
        #expect(try probe.unchanged(record(.sessionRevoked)) {
            storage.acting(for: .daemon).revokeTokens(of: gone, except: nil, audit: $0, completion: $1)
        } == .success([]))
        _ = try probe.unchanged(record(.recoveryCodesCreated)) {
            storage.acting(for: .daemon).replaceRecoveryCodes(of: gone, hashes: [token(1)], audit: $0, completion: $1)
        }
        #expect(try probe.unchanged(record(.recovered)) {
            storage.acting(for: .daemon).redeemRecoveryCode(of: gone, codeHash: token(1), newPasswordHash: Self.newHash,
                                                            audit: $0, completion: $1)
        } == .success(nil))
        #expect(try probe.unchanged(record(.totpEnabled)) {
            storage.acting(for: .daemon).confirmTOTP(of: gone, step: 1, audit: $0, completion: $1)
        } == .success(false))
        _ = try probe.unchanged(record(.totpDisabled)) {
            storage.acting(for: .daemon).removeTOTP(of: gone, audit: $0, completion: $1)
        }
        #expect(try probe.unchanged(record(.locked)) {
            storage.acting(for: .daemon).lockAccount(gone, reason: "x", audit: $0, completion: $1)
        } == .success(false))
        #expect(try probe.unchanged(record(.unlocked)) {
            storage.acting(for: .daemon).unlockAccount(gone, audit: $0, completion: $1)
        } == .success(false))
    }

    // MARK: Appended entries

    @Test(arguments: BackendKind.withAuditLog)
    func anAppendedEntryIsAnsweredAsStored(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let probe = AuditProbe(backend: backend, withEntries: true)
        for appended in [record(.login, outcome: .failed, reason: "locked"),
                         record(.login, nil, outcome: .failed, reason: "unknown_user",
                                peer: AuditPeer(uid: 998, pid: 7, client: "roster-web", remote: "203.0.113.5")),
                         record(.backup, nil, peer: AuditPeer(uid: 0, pid: Int32.max, client: nil))] {
            let entry = try probe.write(appended) { (_, completion: @escaping StorageCompletion<AuditEntry>) in
                backend.storage.acting(for: peerCharge).appendAudit(appended, completion: completion)
            }
            #expect(try AuditProbe.log(of: backend.storage, backend).first == entry)
        }
    }

    @Test(arguments: BackendKind.withAuditLog)
    func onAuditHearsAnEntryOnlyOnceItIsCommitted(_ kind: BackendKind) throws {
        let backend = try kind.make()
        // Another instance, with connections of its own: it can read only what was committed.
        let other = try backend.reopened()
        var found: [[AuditEntry]] = []
        backend.storage.onAudit = { entry, origin in
            #expect(origin == .here)
            other.acting(for: .daemon).auditEntries(AuditQuery(limit: 10),
                                                    completion: { found.append((try? $0.get()) ?? []) })
        }
        _ = try backend.value {
            backend.storage.acting(for: peerCharge).createAccount(NewAccount(username: "alice1", display: "A", email: nil, passwordHash: placeholderHash),
                                                                  audit: record(.register), completion: $0)
        }
        let entry = try backend.value { backend.storage.acting(for: .daemon).appendAudit(record(.backup),
                completion: $0) }
        try backend.run(until: { found.count == 2 })
        #expect(found.count == 2)
        #expect(found.last?.first == entry)
        // Oldest of what the first read found: the append that followed may have committed before that read ran.
        #expect(found.first?.last?.record == record(.register))
    }

    // MARK: A log-in's method

    /// A `login` entry says how its log-in was proved, and every backend gives that back with it: written with its
    /// token (a log-in that succeeded), with its failure (one that did not), or on its own (a refusal); as answered,
    /// as read, and as another instance on the same data reads it.
    @Test(arguments: BackendKind.withAuditLog)
    func aLogInEntryKeepsItsMethod(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let probe = AuditProbe(backend: backend, withEntries: true)
        let alice = try backend.account("alice1")
        for (index, method) in LoginMethod.allCases.enumerated() {
            try probe.write(AuditRecord(event: .login, username: "alice1", peer: Self.peer, method: method)) {
                storage.acting(for: peerCharge).storeToken(hash: token(UInt8(index + 1)), for: alice.id, client: "rosterctl",
                                                           audit: $0, completion: $1)
            }
            try probe.write(AuditRecord(event: .login, username: "alice1", peer: Self.otherPeer, outcome: .failed,
                                        reason: "wrong_password", suppressed: 2, method: method)) {
                storage.acting(for: peerCharge).recordFailure(keys: ["account:alice1"], audit: $0, completion: $1)
            }
            let refused = AuditRecord(event: .login, username: nil, peer: Self.peer, outcome: .failed,
                                      reason: "rate_limited", method: method)
            let entry = try probe.write(refused) { (_, completion: @escaping StorageCompletion<AuditEntry>) in
                storage.acting(for: peerCharge).appendAudit(refused, completion: completion)
            }
            #expect(entry.record.method == method, "answered with its method")
        }
        let log = try AuditProbe.log(of: storage, backend)
        #expect(log.map(\.record.method) == LoginMethod.allCases.reversed().flatMap { [$0, $0, $0] })
        #expect(try backend.value { storage.acting(for: .daemon).auditEntries(AuditQuery(username: "ALICE1", event: .login,
                                                                                          limit: 100), completion: $0) }
                == log.filter { $0.record.username != nil })
        #expect(try AuditProbe.log(of: backend.reopened(), backend) == log)
    }

    /// Every other entry has no method, and reads back with none; and a write's mails' `mail_queued` entries have
    /// none whatever the write's own entry has (each backend writes them on a path of its own).
    @Test(arguments: BackendKind.withAuditLog)
    func entriesWithoutAMethodAndAWritesMailEntriesReadBackWithNone(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let probe = AuditProbe(backend: backend, withEntries: true)
        let alice = try probe.write(record(.register)) {
            storage.acting(for: peerCharge).createAccount(NewAccount(username: "alice1", display: "Alice", email: "alice@example.com",
                                                                     passwordHash: placeholderHash), audit: $0, completion: $1)
        }
        try probe.write(record(.login, outcome: .failed, reason: "suppressed", suppressed: 9)) {
            storage.acting(for: peerCharge).recordFailure(keys: ["account:alice1"], audit: $0, completion: $1)
        }
        let changed = AuditRecord(event: .emailChanged, username: "alice1", peer: Self.peer, method: .passkey)
        let mails = [QueuedMail(account: alice.id, kind: .emailChanged, recipient: "alice@example.com", sealedMessage: [1]),
                     QueuedMail(account: alice.id, kind: .verification, recipient: "alice@example.org", sealedMessage: [2])]
        let heardBefore = backend.heard.entries.count
        _ = try backend.value { storage.acting(for: charge(alice.id)).changeEmail(of: alice.id, to: "alice@example.org",
                                                                                  audit: changed, mail: mails, completion: $0) }
        let log = try AuditProbe.log(of: storage, backend)
        #expect(log.map(\.record.event) == [.mailQueued, .mailQueued, .emailChanged, .login, .register])
        #expect(log.map(\.record.method) == [nil, nil, .passkey, nil, nil])
        #expect(Array(backend.heard.entries.dropFirst(heardBefore).map(\.entry).reversed()) == Array(log.prefix(3)),
                "onAudit heard them as stored")
        #expect(try AuditProbe.log(of: backend.reopened(), backend) == log)
    }

    // MARK: Queries

    /// `records` appended one a second, from the backend's now on.
    private func appended(_ records: [AuditRecord], to backend: Backend) throws -> [AuditEntry] {
        try records.map { appended in
            defer { backend.clock.advance(byMs: 1_000) }
            return try backend.value { backend.storage.acting(for: peerCharge).appendAudit(appended, completion: $0) }
        }
    }

    @Test(arguments: BackendKind.withAuditLog)
    func queriesAnswerNewestFirstThroughEveryFilter(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let start = backend.clock.nowMs()
        let written = try appended([record(.register, "alice1"), record(.login, "alice1"), record(.login, "bobby1"),
                                    record(.login, nil, outcome: .failed, reason: "unknown_user"),
                                    record(.logout, "alice1")], to: backend)
        let (register, aliceLogin, bobLogin, unknown, logout) = (written[0], written[1], written[2], written[3], written[4])
        func query(_ query: AuditQuery) throws -> [AuditEntry] {
            try backend.value { storage.acting(for: .daemon).auditEntries(query, completion: $0) }
        }
        #expect(try query(AuditQuery(limit: 100)) == [logout, unknown, bobLogin, aliceLogin, register])
        #expect(try query(AuditQuery(username: "alice1", limit: 100)) == [logout, aliceLogin, register])
        #expect(try query(AuditQuery(username: "ALICE1", limit: 100)) == [logout, aliceLogin, register],
                "usernames without regard to ASCII case")
        #expect(try query(AuditQuery(username: "nobody", limit: 100)) == [])
        #expect(try query(AuditQuery(event: .login, limit: 100)) == [unknown, bobLogin, aliceLogin])
        #expect(try query(AuditQuery(username: "alice1", event: .login, limit: 100)) == [aliceLogin])
        #expect(try query(AuditQuery(sinceMs: start + 2_000, limit: 100)) == [logout, unknown, bobLogin],
                "since is at or after")
        #expect(try query(AuditQuery(beforeID: bobLogin.id, limit: 100)) == [aliceLogin, register])
        #expect(try query(AuditQuery(limit: 2)) == [logout, unknown])
        #expect(try query(AuditQuery(beforeID: unknown.id, limit: 2)) == [bobLogin, aliceLogin], "the next page")
        #expect(try query(AuditQuery(username: "alice1", sinceMs: start + 1_000, beforeID: logout.id, limit: 100))
                == [aliceLogin])
    }

    // MARK: Pruning and ids

    @Test(arguments: BackendKind.withAuditLog)
    func pruningRemovesOnlyOlderEntriesAndIdsAreNeverReused(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let start = backend.clock.nowMs()
        let written = try appended([record(.register), record(.login), record(.logout)], to: backend)
        let heard = backend.heard.entries
        #expect(try backend.value { storage.acting(for: .daemon).pruneAudit(before: start + 1_000,
                                                                            completion: $0) } == 1)
        #expect(try AuditProbe.log(of: storage, backend) == [written[2], written[1]])
        #expect(try backend.value { storage.acting(for: .daemon).pruneAudit(before: start + 1_000,
                                                                            completion: $0) } == 0)
        #expect(try backend.value { storage.acting(for: .daemon).pruneAudit(before: start + 60_000,
                                                                            completion: $0) } == 2)
        #expect(try AuditProbe.log(of: storage, backend) == [])
        #expect(backend.heard.entries == heard, "pruning tells onAudit nothing")

        // The newest entry went, yet its id is not given again: a follower de-duplicates by id.
        let next = try backend.value { storage.acting(for: peerCharge).appendAudit(record(.login), completion: $0) }
        #expect(next.id > written[2].id)
        let other = try backend.reopened()
        let later = try backend.value { other.acting(for: peerCharge).appendAudit(record(.logout), completion: $0) }
        #expect(later.id > next.id)
    }
}

/// Audited writes on one backend, each checked against the log before and after.
private struct AuditProbe {
    let backend: Backend
    /// With entries, each write is given its record and must commit exactly it; without, each is given nil and
    /// must leave the log as it was.
    let withEntries: Bool

    /// Every entry `storage` holds, newest first.
    static func log(of storage: any Storage, _ backend: Backend, sourceLocation: SourceLocation = #_sourceLocation)
        throws -> [AuditEntry] {
        try backend.value(sourceLocation: sourceLocation) {
            storage.acting(for: .daemon).auditEntries(AuditQuery(limit: 1_000), completion: $0)
        }
    }

    /// The log, and how many entries `onAudit` heard, a second after the last write.
    private func aSecondLater(_ sourceLocation: SourceLocation) throws -> (log: [AuditEntry], heard: Int) {
        backend.clock.advance(byMs: 1_000)
        return (try Self.log(of: backend.storage, backend, sourceLocation: sourceLocation), backend.heard.entries.count)
    }

    /// `call`'s value, a second after the last write, given `record` (or nil) and checked as `withEntries` says.
    @discardableResult
    func write<T>(_ record: AuditRecord, expecting expected: AuditRecord? = nil,
                  sourceLocation: SourceLocation = #_sourceLocation,
                  _ call: (AuditRecord?, @escaping StorageCompletion<T>) -> Void) throws -> T {
        let (before, heardBefore) = try aSecondLater(sourceLocation)
        var heardByTheAnswer = -1
        let value = try backend.value(sourceLocation: sourceLocation) { done in
            call(withEntries ? record : nil) { result in
                heardByTheAnswer = backend.heard.entries.count
                done(result)
            }
        }
        let after = try Self.log(of: backend.storage, backend, sourceLocation: sourceLocation)
        let heard = Array(backend.heard.entries.dropFirst(heardBefore))
        guard withEntries else {
            #expect(after == before, "a write given no entry logged one", sourceLocation: sourceLocation)
            #expect(heard == [], sourceLocation: sourceLocation)
            return value
        }
        #expect(after.count == before.count + 1, "\(record.event) logged \(after.count - before.count) entries",
                sourceLocation: sourceLocation)
        let entry = try #require(after.first, sourceLocation: sourceLocation)
        #expect(entry.record == expected ?? record, sourceLocation: sourceLocation)
        #expect(entry.timeMs == backend.clock.nowMs(), "the entry carries the backend's time", sourceLocation: sourceLocation)
        #expect(before.allSatisfy { $0.id < entry.id }, "an entry's id is past every earlier one",
                sourceLocation: sourceLocation)
        #expect(Array(after.dropFirst()) == before, sourceLocation: sourceLocation)
        #expect(heard == [HeardAudit(entry: entry, origin: .here)], "onAudit hears the entry once",
                sourceLocation: sourceLocation)
        #expect(heardByTheAnswer == heardBefore + 1, "onAudit heard the entry by the time the write answered",
                sourceLocation: sourceLocation)
        return value
    }

    /// What `call` answers when given `record` for a write that must change nothing: the log stays as it was.
    func unchanged<T>(_ record: AuditRecord, sourceLocation: SourceLocation = #_sourceLocation,
                      _ call: (AuditRecord, @escaping StorageCompletion<T>) -> Void) throws -> Result<T, StorageFailure> {
        let (before, heardBefore) = try aSecondLater(sourceLocation)
        let answer = try backend.answer(sourceLocation: sourceLocation) { call(record, $0) }
        #expect(try Self.log(of: backend.storage, backend, sourceLocation: sourceLocation) == before,
                "\(record.event) logged an entry for a write that changed nothing", sourceLocation: sourceLocation)
        #expect(backend.heard.entries.count == heardBefore, sourceLocation: sourceLocation)
        return answer
    }
}

extension Result {
    fileprivate var isFailure: Bool {
        if case .failure = self { return true }
        return false
    }
}
