import RosterCore
@testable import RosterPostgres
import RosterPostgresTesting
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Testing

/// What PostgreSQL adds to the audit contract (which `AuditContractTests` checks on every backend): an entry
/// written through one daemon reaches every other as `.elsewhere`, once, whole, and never comes back to its writer
/// as anything but its own `.here`; an entry commits in its change's statement (a write that fails leaves none)
/// and is stamped with that statement's now; the table refuses an UPDATE; pruning goes in batches.
@Suite("PostgreSQL audit log")
struct PostgreSQLAuditTests {
    private func record(_ event: AuditEvent, _ username: String?, client: String? = "rosterctl 2.0 (100% sure)",
                        remote: String? = nil, outcome: AuditOutcome = .succeeded, reason: String? = nil,
                        suppressed: Int = 0) -> AuditRecord {
        AuditRecord(event: event, username: username, peer: AuditPeer(uid: 1_000, pid: 4_242, client: client, remote: remote),
                    outcome: outcome, reason: reason, suppressed: suppressed)
    }

    private func entries(_ storage: PostgreSQLStorage, _ pair: StoragePair, _ query: AuditQuery = AuditQuery(limit: 1_000))
        throws -> [AuditEntry] {
        try pair.value { storage.acting(for: .daemon).auditEntries(query, completion: $0) }
    }

    @Test func anEntryWrittenThroughOneReachesTheOtherAsElsewhereOnceWithEveryField() throws {
        let pair = try StoragePair()
        try pair.waitForListeners()
        // Issue 17: entries with the remote a gateway spoke for (IPv6 and IPv4) and without.
        let alice = try pair.register("alice1", on: pair.a, audit: record(.register, "alice1", remote: "2001:db8::5"))
        let appended = try pair.value {
            pair.a.acting(for: .daemon).appendAudit(record(.login, nil, client: nil, remote: "203.0.113.5", outcome: .failed,
                                                           reason: "unknown_user", suppressed: 7),
                                                    completion: $0)
        }
        #expect(try pair.value { pair.a.acting(for: .daemon).lockAccount(alice.id,
                                                                         reason: "stolen laptop, 2 = too many",
                                                                         audit: record(.locked, "alice1", reason: "stolen laptop, 2 = too many"),
                                                                         completion: $0) })
        // A client name too large for a payload: announced by id, read by the other from the table.
        let huge = String(repeating: "x", count: AuditNotification.maxPayloadBytes + 1)
        _ = try pair.value { pair.a.acting(for: .daemon).appendAudit(record(.backup, nil, client: huge, remote: "198.51.100.7"),
                                                                     completion: $0) }
        // One write of the other's own, whose entry must not come back to it.
        try pair.value { pair.b.acting(for: .daemon).recordFailure(keys: ["account:alice1"],
                                                                   audit: record(.login, "alice1", outcome: .failed, reason: "wrong_password"),
                                                                   completion: $0) }

        let written = try entries(pair.a, pair).reversed()
        #expect(written.count == 5)
        #expect(written.dropFirst().first == appended)
        let byA = Array(written.prefix(4))
        try pair.harness.run(until: { pair.auditedByB.count >= 5 && pair.auditedByA.count >= 5 })
        #expect(pair.auditedByA.map(\.entry) == Array(written))
        #expect(pair.auditedByA.map(\.origin) == [.here, .here, .here, .here, .elsewhere])
        #expect(pair.auditedByB.first { $0.origin == .here }?.entry == written.last)
        #expect(Set(pair.auditedByB.filter { $0.origin == .elsewhere }.map(\.entry.id)) == Set(byA.map(\.id)))
        for entry in byA {
            #expect(pair.auditedByB.filter { $0.entry == entry }.map(\.origin) == [.elsewhere], "entry \(entry.id)")
        }
        #expect(byA.last?.record.peer.client == huge)
        #expect(byA.map(\.record.peer.remote) == ["2001:db8::5", "203.0.113.5", nil, "198.51.100.7"],
                "every entry's remote as written, the one read by id too")
        // A marker each way: everything sent before it has arrived, so no echo or second copy is on its way.
        let (changesByA, changesByB) = (pair.heardByA.count, pair.heardByB.count)
        _ = try pair.register("marker1", on: pair.a)
        _ = try pair.register("marker2", on: pair.b)
        try pair.harness.run(until: { pair.heardByB.count == changesByB + 1 && pair.heardByA.count == changesByA + 1 })
        #expect(pair.auditedByA.count == 5)
        #expect(pair.auditedByB.count == 5)
    }

    /// A log-in's entry reaches the other daemon with its method, whichever it is, with a remote or without, whole
    /// in the payload or (too large for one) read by id; an entry without one arrives without one.
    @Test func aLogInsMethodReachesTheOtherDaemon() throws {
        let pair = try StoragePair()
        try pair.waitForListeners()
        let alice = try pair.register("alice1", on: pair.a)
        let huge = String(repeating: "x", count: AuditNotification.maxPayloadBytes + 1)
        var records: [AuditRecord] = []
        for method in LoginMethod.allCases {
            records.append(AuditRecord(event: .login, username: "alice1", peer: AuditPeer(uid: 1_000, pid: 1, client: nil),
                                       method: method))
            records.append(AuditRecord(event: .login, username: "alice1",
                                       peer: AuditPeer(uid: 33, pid: 2, client: "roster-web", remote: "2001:db8::5"),
                                       outcome: .failed, reason: "wrong_password", suppressed: 1, method: method))
        }
        records.append(AuditRecord(event: .login, username: "alice1", peer: AuditPeer(uid: 0, pid: 3, client: huge),
                                   method: .passkey))
        records.append(record(.logout, "alice1", remote: "203.0.113.5"))
        for (index, entry) in records.enumerated() {
            if entry.outcome == .failed {
                try pair.value { pair.a.acting(for: .daemon).recordFailure(keys: ["account:alice1"], audit: entry,
                                                                           completion: $0) }
            } else if entry.event == .login {
                try pair.value { pair.a.acting(for: .daemon).storeToken(hash: [UInt8](repeating: UInt8(index), count: 32),
                                                                        for: alice.id, client: nil, audit: entry,
                                                                        completion: $0) }
            } else {
                _ = try pair.value { pair.a.acting(for: .daemon).appendAudit(entry, completion: $0) }
            }
        }
        let written = Array(try entries(pair.a, pair).reversed())
        #expect(written.map(\.record) == records)
        try pair.harness.run(until: { pair.auditedByB.count >= records.count })
        // By id: the entry read by id may come after the ones heard whole behind it.
        let heard = pair.auditedByB.sorted { $0.entry.id < $1.entry.id }
        #expect(heard.map(\.entry) == written)
        #expect(heard.allSatisfy { $0.origin == .elsewhere })
        #expect(heard.map(\.entry.record.method) == records.map(\.method))
    }

    /// A method this rosterd does not know (a newer one's, or a text of another case), in a row or in an
    /// announcement, reads as none: the entry is still read, listed and followed.
    @Test func anUnknownMethodReadsAsNone() throws {
        let pair = try StoragePair()
        let cluster = try PostgresTestCluster.shared
        try cluster.psql("""
            INSERT INTO audit_log(time_ms, event, username, peer_uid, peer_pid, outcome, method)
            VALUES (5, 'login', 'alice1', 1000, 42, 'succeeded', 'smartcard'),
                   (6, 'login', 'alice1', 1000, 42, 'succeeded', 'PASSKEY')
            """, database: pair.database)
        let unproved = AuditRecord(event: .login, username: "alice1", peer: AuditPeer(uid: 1_000, pid: 42, client: nil))
        #expect(try entries(pair.a, pair).map(\.record) == [unproved, unproved])
        #expect(try entries(pair.a, pair).map(\.id) == [2, 1])
        let heard = try AuditNotification.parse("1 other audit 7 8 login =alice1 1000 42  succeeded  0  =smartcard")
        #expect(heard.heard == .entry(AuditEntry(id: 7, timeMs: 8, record: unproved)))
    }

    @Test func theEntriesOfAWritesMailsReachTheOtherAsElsewhereAfterTheWrites() throws {
        let pair = try StoragePair()
        try pair.waitForListeners()
        let alice = try pair.register("alice1", on: pair.a)
        func mail(_ kind: MailKindName, to recipient: String) -> QueuedMail {
            QueuedMail(account: alice.id, kind: kind, recipient: recipient, sealedMessage: [1, 2, 3])
        }
        _ = try pair.value { pair.a.acting(for: .daemon).changeEmail(of: alice.id, to: "new@example.com",
                audit: record(.emailChanged, "alice1", remote: "203.0.113.5"),
                mail: [mail(.emailChanged, to: "old@example.com"), mail(.verification, to: "new@example.com")],
                completion: $0) }
        try pair.value { pair.a.acting(for: .daemon).removeTOTP(of: alice.id, audit: record(.totpDisabled, "alice1"),
                                                                mail: [mail(.totpDisabled, to: "new@example.com")],
                                                                completion: $0) }
        let written = Array(try entries(pair.a, pair).reversed())
        #expect(written.map(\.record.event) == [.emailChanged, .mailQueued, .mailQueued, .totpDisabled, .mailQueued])
        #expect(written.map(\.record.reason) == [nil, "email_changed", "verification", nil, "totp_disabled"])
        #expect(written[1].record.peer.remote == "203.0.113.5", "a mail's entry has its write's peer, remote and all")
        try pair.harness.run(until: { pair.auditedByB.count >= 5 && pair.auditedByA.count >= 5 })
        #expect(pair.auditedByA.map(\.entry) == written)
        #expect(pair.auditedByA.allSatisfy { $0.origin == .here })
        #expect(Set(pair.auditedByB.map(\.entry.id)) == Set(written.map(\.id)))
        for entry in written {
            #expect(pair.auditedByB.filter { $0.entry == entry }.map(\.origin) == [.elsewhere], "entry \(entry.id)")
        }
    }

    @Test func anEntryCommitsInItsChangesStatementStampedWithItsNow() throws {
        let pair = try StoragePair(clock: nil)
        let alice = try pair.register("alice1", on: pair.a, audit: record(.register, "alice1"))
        #expect(try entries(pair.a, pair).map(\.timeMs) == [alice.createdAtMs])
        #expect(try pair.value { pair.a.acting(for: .daemon).lockAccount(alice.id, reason: nil,
                                                                         audit: record(.locked, "alice1"),
                                                                         completion: $0) })
        let lockedAt = try pair.value { pair.a.acting(for: .daemon).accountSummary(.username("alice1"),
                completion: $0) }?.lockedAtMs
        #expect(try entries(pair.a, pair, AuditQuery(event: .locked, limit: 10)).map(\.timeMs) == [lockedAt])

        // A token for an account that is not there fails whole: no entry, no announcement.
        let failed = try pair.harness.answer { pair.a.acting(for: .daemon).storeToken(hash: [UInt8](repeating: 1, count: 32),
                for: 9_999, client: nil, audit: record(.login, "ghost1"), completion: $0) }
        #expect(throws: StorageFailure.self) { try failed.get() }
        // A change that did not happen writes none either: a token that was not there, a registration that clashed.
        #expect(try !pair.value { pair.a.acting(for: .daemon).revokeToken(hash: [UInt8](repeating: 2, count: 32),
                                                                          audit: record(.logout, "alice1"),
                                                                          completion: $0) })
        let clash = try pair.harness.answer {
            pair.a.acting(for: .daemon).createAccount(NewAccount(username: "ALICE1", display: "ALICE1", email: nil,
                                                                 passwordHash: StoragePair.placeholderHash),
                                                      audit: record(.register, "ALICE1"), completion: $0)
        }
        #expect(clash.map(\.id) == .failure(.conflict(.username)))
        #expect(try entries(pair.a, pair).map(\.record.event) == [.locked, .register])
        #expect(pair.auditedByA.map(\.entry) == (try entries(pair.a, pair)).reversed())
    }

    @Test func aNULIsStoredAsAReplacementCharacterAndTheWriteGoesThrough() throws {
        let pair = try StoragePair()
        let entry = try pair.value { pair.a.acting(for: .daemon).appendAudit(record(.login, "bobby1", client: "evil\u{0}client",
                                                                                    reason: "a\u{0}b"), completion: $0) }
        #expect(entry.record.peer.client == "evil\u{FFFD}client")
        #expect(entry.record.reason == "a\u{FFFD}b")
        #expect(try entries(pair.a, pair) == [entry])
    }

    @Test func theLogRefusesAnUpdateAndPruningGoesInBatches() throws {
        let pair = try StoragePair()
        let cluster = try PostgresTestCluster.shared
        let count = PostgreSQLStorage.pruneBatch * 2 + 5
        try cluster.psql("""
            INSERT INTO audit_log(time_ms, event, username, peer_uid, peer_pid, outcome)
            SELECT n, 'login', 'user' || n, 0, 1, 'succeeded' FROM generate_series(1, \(count)) n
            """, database: pair.database)
        #expect(throws: PostgresTestCluster.SetupError.self) {
            try cluster.psql("UPDATE audit_log SET username = 'someone_else' WHERE id = 1", database: pair.database)
        }
        #expect(try entries(pair.a, pair, AuditQuery(username: "USER1", limit: 10)).map(\.record.username) == ["user1"])

        #expect(try pair.value { pair.a.acting(for: .daemon).pruneAudit(before: Int64(count - 2),
                                                                        completion: $0) } == count - 3)
        #expect(try entries(pair.a, pair).map(\.timeMs) == [Int64(count), Int64(count - 1), Int64(count - 2)])
        #expect(try pair.value { pair.a.acting(for: .daemon).pruneAudit(before: 1, completion: $0) } == 0)
    }
}
