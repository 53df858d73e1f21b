import RosterCore
import RosterPostgres
import RosterPostgresTesting
import RosterRuntime
import RosterStorage
import RosterStorageTesting
@testable import RosterSQLite
import Testing

/// `--copy-database` carries the audit log both ways between SQLite and PostgreSQL: every entry with
/// its id, time and fields, read back through the other backend's own `auditEntries`, and the copy's next entry
/// gets an id past every copied one (ids page and de-duplicate the log). A NUL, which SQLite holds and PostgreSQL
/// cannot, arrives as U+FFFD, as PostgreSQL writes it live, rather than failing the copy. A log-in's method goes
/// with its entry each way, and an entry without one stays without.
@Suite("Copying the audit log between SQLite and PostgreSQL")
struct AuditCopyTests {
    private static let peer = AuditPeer(uid: 4_294_967_294, pid: 4_242, client: "rosterctl 2.0 (100% sure)",
                                        remote: "2001:db8::5")

    private func log(_ backend: Backend) throws -> [AuditEntry] {
        try backend.value { backend.storage.acting(for: .daemon).auditEntries(AuditQuery(limit: 1_000),
                                                                              completion: $0) }
    }

    /// One more entry, which must get an id past every copied one.
    private func appended(_ backend: Backend) throws -> AuditEntry {
        try backend.value { backend.storage.acting(for: .daemon).appendAudit(AuditRecord(event: .backup, username: nil, peer: Self.peer),
                                                                             completion: $0) }
    }

    @Test func theLogGoesFromSQLiteToPostgreSQLAndBackWithItsIdsTimesAndFields() throws {
        let directory = try TemporaryDirectory()
        let clock = ManualWallClock()
        let first = try CopyEnds.sqlite(directory.path("first.db"), directory, clock: clock)
        let storage = first.storage
        let alice = try first.value {
            storage.acting(for: peerCharge).createAccount(NewAccount(username: "alice1", display: "Alice", email: nil, passwordHash: placeholderHash),
                                                          audit: AuditRecord(event: .register, username: "alice1", peer: Self.peer),
                                                          completion: $0)
        }
        clock.advance(byMs: 1_000)
        for record in [AuditRecord(event: .login, username: nil, peer: AuditPeer(uid: 0, pid: 1, client: nil), outcome: .failed,
                                   reason: "unknown_user", suppressed: 4),
                       AuditRecord(event: .login, username: "alice1", peer: AuditPeer(uid: 7, pid: 8, client: "evil\u{0}client",
                                                                                      remote: "203.0.113.5"),
                                   outcome: .failed, reason: "wrong_password", method: .password),
                       AuditRecord(event: .login, username: "alice1", peer: AuditPeer(uid: 7, pid: 9, client: nil), method: .passkey),
                       AuditRecord(event: .login, username: "alice1", peer: Self.peer, method: .recovery),
                       AuditRecord(event: .backup, username: nil, peer: AuditPeer(uid: 7, pid: 8, client: ""), reason: "")] {
            _ = try first.value { storage.acting(for: .daemon).appendAudit(record, completion: $0) }
            clock.advance(byMs: 1_000)
        }
        #expect(try first.value { storage.acting(for: .daemon).lockAccount(alice.id, reason: "stolen laptop",
                                                                           audit: AuditRecord(event: .locked, username: "alice1", peer: Self.peer,
                                                                                              reason: "stolen laptop"),
                                                                           completion: $0) })
        let original = try log(first)
        #expect(original.count == 7)
        #expect(original.compactMap(\.record.peer.remote).sorted() == ["2001:db8::5", "2001:db8::5", "2001:db8::5",
                                                                        "203.0.113.5"])
        #expect(original.map(\.record.method) == [nil, nil, .recovery, .passkey, .password, nil, nil])
        // As the daemon exits: its work done, its lock let go, so that a copy may open the file.
        storage.stop()
        (storage as? SQLiteStorage)?.releaseLock()

        let cluster = try PostgresTestCluster.shared
        let conninfo = try cluster.createDatabase()
        // Each end in a scope of its own: an SQLite end holds the file's lock until it goes.
        do { try CopyEnds.copy(try SQLiteCopy.source(path: directory.path("first.db")), try PostgreSQLCopy(conninfo: conninfo)) }
        let shared = try CopyEnds.postgres(conninfo, clock: clock)
        var expected = original
        for index in expected.indices where expected[index].record.peer.client == "evil\u{0}client" {
            expected[index].record.peer.client = "evil\u{FFFD}client"
        }
        #expect(try log(shared) == expected)
        #expect(try log(shared).map(\.record.method) == original.map(\.record.method))
        #expect(try appended(shared).id > original.map(\.id).max() ?? 0)
        let onPostgreSQL = try log(shared)

        // And back, through a second PostgreSQL database (PostgreSQL to PostgreSQL as an operator moves servers).
        let second = try cluster.createDatabase()
        do { try CopyEnds.copy(try PostgreSQLCopy(conninfo: conninfo), try PostgreSQLCopy(conninfo: second)) }
        do { try CopyEnds.copy(try PostgreSQLCopy(conninfo: second), try SQLiteCopy.target(path: directory.path("back.db"), now: 1)) }
        let back = try CopyEnds.sqlite(directory.path("back.db"), directory, clock: clock)
        #expect(try log(back) == onPostgreSQL)
        #expect(try log(back).dropFirst().map(\.record.method) == original.map(\.record.method))
        #expect(try appended(back).id > onPostgreSQL.map(\.id).max() ?? 0)
        #expect(try back.value { back.storage.acting(for: .daemon).auditEntries(AuditQuery(username: "ALICE1", limit: 10),
                                                                                completion: $0) }.map(\.record.event)
                == [.locked, .login, .login, .login, .register])
    }
}
