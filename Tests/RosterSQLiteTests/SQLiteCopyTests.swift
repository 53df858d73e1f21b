import Foundation
import CSQLite
import Glibc
import RosterCore
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Testing
@testable import RosterSQLite

/// Issue 14: an SQLite database as either end of `rosterd --copy-database`. The driver's own rules (an empty
/// target, counts at the end) are `DatabaseCopyTests`; the real daemon's round trip is in rosterdTests.
@Suite("SQLite as a copy's source and target")
struct SQLiteCopyTests {
    private let hash = "$argon2id$v=19$m=8,t=1,p=1$c2FsdA$aGFzaA"

    /// Accounts (one with an email), tokens (one with a client), failures, contacts, recovery codes, TOTP rows
    /// (one confirmed, one only pending) and audit entries (one with every optional field empty, one a log-in
    /// with its method), with holes in every id sequence.
    private func filledDatabase(_ directory: TemporaryDirectory, _ name: String = "source.db") throws {
        let database = try directory.rosterDatabase(name)
        defer { database.close() }
        let users = UserStore(database: database)
        let alice = try users.insertUser(canonical: "alice1", display: "Alice1", email: "a@example.org", passwordHash: hash,
                                         createdAt: 10)
        let gone = try users.insertUser(canonical: "gone01", display: "gone01", email: nil, passwordHash: hash, createdAt: 11)
        let bob = try users.insertUser(canonical: "bobby1", display: "bobby1", email: nil, passwordHash: hash, createdAt: 12)
        try database.execute("DELETE FROM users WHERE id = \(gone.id)")
        let tokens = SessionTokenStore(database: database)
        try tokens.insert(tokenHash: [UInt8](repeating: 1, count: 32), userID: alice.id, client: "rosterctl", now: 20)
        try tokens.insert(tokenHash: [UInt8](repeating: 2, count: 32), userID: bob.id, now: 21)
        try LoginFailureStore(database: database).record(keys: ["account:alice1", "uid:1000"], at: 30)
        let life = AccountLifeStore(database: database)
        try life.replaceRecoveryCodes(userID: alice.id, hashes: [[UInt8](repeating: 7, count: 32), [UInt8](repeating: 8, count: 32)])
        try life.storePendingTOTP(userID: alice.id, sealed: [1, 2, 3])
        _ = try life.confirmTOTP(userID: alice.id, step: 55)
        try life.storePendingTOTP(userID: bob.id, sealed: [4, 5])
        let contacts = ContactStore(database: database)
        for (index, draft) in [ContactDraft(name: "张三", phone: "138 0013 8000"), ContactDraft(name: "Nguyễn Văn Ánh"),
                               ContactDraft(name: "김수현", email: "k@example.org", note: "two\nlines"),
                               ContactDraft(name: "Dropped")].enumerated() {
            let owner = index % 2 == 0 ? alice.id : bob.id
            let stored = try contacts.insert(userID: owner, draft, keys: ContactSearchKeys(draft: draft), now: 40 + Int64(index))
            if draft.name == "Dropped" { _ = try contacts.delete(userID: owner, id: stored.contact.id) }
        }
        let log = AuditLogStore(database: database)
        let peer = AuditPeer(uid: 4_294_967_294, pid: 42, client: "rosterctl")
        for (index, record) in [AuditRecord(event: .register, username: "alice1", peer: peer),
                                AuditRecord(event: .logout, username: "bobby1", peer: peer),
                                AuditRecord(event: .login, username: nil, peer: AuditPeer(uid: 0, pid: 1, client: nil),
                                            outcome: .failed, reason: "unknown_user", suppressed: 2),
                                AuditRecord(event: .locked, username: "bobby1", peer: peer, reason: "phished"),
                                AuditRecord(event: .login, username: "alice1", peer: peer, method: .passkey)].enumerated() {
            let entry = try log.append(record, at: 60 + Int64(index))
            if record.event == .logout { try database.execute("DELETE FROM audit_log WHERE id = \(entry.id)") }
        }
    }

    /// Every row of every table, as text, in a fixed order.
    private func dump(_ path: String) throws -> [String] {
        let database = try Database(path: path)
        defer { database.close() }
        var rows: [String] = []
        for table in ["users ORDER BY id", "session_tokens ORDER BY token_hash", "login_failures ORDER BY rowid",
                      "contacts ORDER BY id", "recovery_codes ORDER BY code_hash", "totp ORDER BY user_id",
                      "audit_log ORDER BY id"] {
            let select = try database.prepare("SELECT * FROM \(table)")
            while try select.step() {
                rows.append(table + ": " + (0..<select.columnCount).map { "\(select.value(at: $0))" }.joined(separator: "|"))
            }
        }
        return rows
    }

    private func copy(_ source: SQLiteCopy, _ target: SQLiteCopy, batchSize: Int) throws -> [CopyBatch] {
        var batches: [CopyBatch] = []
        try source.readAll(batchSize: batchSize) { (batch: CopyBatch) throws(CopyError) in
            batches.append(batch)
            try target.write(batch)
        }
        try target.finish()
        return batches
    }

    private func failure(_ body: () throws(CopyError) -> Void) -> String? {
        do throws(CopyError) {
            try body()
            return nil
        } catch {
            guard case .failed(let why) = error else { return "\(error)" }
            return why
        }
    }

    /// A copy that fails midway (here a batch the target refuses after others went in) leaves the target empty,
    /// so the same copy run again goes through instead of being refused as a non-empty target.
    @Test func aCopyThatFailsMidwayLeavesTheTargetEmptyAndItsRetrySucceeds() throws {
        let directory = try TemporaryDirectory()
        try filledDatabase(directory)
        let target = directory.path("target.db")
        do {
            let source = try SQLiteCopy.source(path: directory.path("source.db"))
            let into = try SQLiteCopy.target(path: target, now: 1)
            var written = 0
            let why = failure { () throws(CopyError) in
                try source.readAll(batchSize: 1) { (batch: CopyBatch) throws(CopyError) in
                    try into.write(batch)
                    written += 1
                    // The third batch again: its row is there already, and the target refuses it.
                    if written == 3 { try into.write(batch) }
                }
            }
            #expect(why != nil, "the target took a row twice")
            #expect(written == 3)
        }
        let after = try SQLiteCopy.target(path: target, now: 2)
        #expect(try after.counts() == CopyCounts(), "the failed copy left rows behind")
        let source = try SQLiteCopy.source(path: directory.path("source.db"))
        _ = try copy(source, after, batchSize: 2)
        #expect(try after.counts() == source.counts())
    }

    @Test func aCopyIntoANewFileKeepsEveryRowAndIdAndItsIdsGoOnAfterThem() throws {
        let directory = try TemporaryDirectory()
        try filledDatabase(directory)
        let target = directory.path("target.db")
        do {
            let source = try SQLiteCopy.source(path: directory.path("source.db"))
            let into = try SQLiteCopy.target(path: target, now: 1)
            #expect(try into.counts() == CopyCounts())
            let batches = try copy(source, into, batchSize: 1)
            // One row a batch: accounts, then tokens, failures, contacts, codes, TOTP and audit entries, each in its
            // own batches.
            #expect(batches.count == 2 + 2 + 2 + 3 + 2 + 2 + 4)
            #expect(try source.counts() == CopyCounts(accounts: 2, tokens: 2, failures: 2, contacts: 3, recoveryCodes: 2,
                                                      totp: 2, audit: 4))
            #expect(try into.counts() == source.counts())
        }
        #expect(try dump(target) == dump(directory.path("source.db")))

        let database = try Database(path: target)
        defer { database.close() }
        let next = try UserStore(database: database).insertUser(canonical: "carol1", display: "carol1", email: nil,
                                                               passwordHash: hash, createdAt: 50)
        #expect(next.id == 4)
        #expect(try UserStore(database: database).user(canonical: "ALICE1")?.email == "a@example.org")
        #expect(try UserStore(database: database).credential(canonical: "alice1")?.totp == TOTPSeal(sealed: [1, 2, 3], lastStep: 55))
        let copiedLog = try AuditLogStore(database: database).entries(AuditQuery(limit: 10))
        #expect(copiedLog.map(\.id) == [5, 4, 3, 1])
        #expect(copiedLog.map(\.record.reason) == [nil, "phished", "unknown_user", nil])
        #expect(copiedLog.map(\.record.method) == [.passkey, nil, nil, nil])
        #expect(try AuditLogStore(database: database).append(copiedLog[0].record, at: 70).id == 6)
    }

    @Test func batchesHoldAtMostTheirSizeAndEveryRowOnce() throws {
        let directory = try TemporaryDirectory()
        let database = try directory.rosterDatabase("source.db")
        try addUsers(database, count: 2_500)
        database.close()
        let source = try SQLiteCopy.source(path: directory.path("source.db"))
        var sizes: [Int] = []
        try source.readAll(batchSize: 1_000) { (batch: CopyBatch) throws(CopyError) in
            guard case .accounts(let rows) = batch else { return }
            sizes.append(rows.count)
        }
        #expect(sizes == [1_000, 1_000, 500])
    }

    @Test func aSourceMustBeAnUndamagedRosterDatabaseAndIsLeftAsItWas() throws {
        let directory = try TemporaryDirectory()
        #expect(failure { () throws(CopyError) in _ = try SQLiteCopy.source(path: directory.path("missing.db")) }?.contains("holds no Roster database") == true)
        #expect(access(directory.path("missing.db"), F_OK) != 0, "a missing source is not created")
        try Data("not a database at all, just text".utf8).write(to: directory.url.appendingPathComponent("text.db"))
        #expect(failure { () throws(CopyError) in _ = try SQLiteCopy.source(path: directory.path("text.db")) }?.contains("not an SQLite database") == true)
        let foreign = try Database(path: directory.path("foreign.db"))
        try foreign.execute("PRAGMA application_id = 7; CREATE TABLE t(x)")
        foreign.close()
        let before = directory.bytes("foreign.db")
        #expect(failure { () throws(CopyError) in _ = try SQLiteCopy.source(path: directory.path("foreign.db")) }?.contains("another application") == true)
        #expect(directory.bytes("foreign.db") == before)
        // A Roster file of an older schema: the daemon migrates it at start, the copy does not.
        let old = try Database(path: directory.path("old.db"))
        try old.execute("PRAGMA application_id = \(RosterSchema.applicationID)")
        try Migrator.migrate(old, migrations: Array(RosterSchema.migrations.prefix(4)), now: 1)
        old.close()
        #expect(failure { () throws(CopyError) in _ = try SQLiteCopy.source(path: directory.path("old.db")) }?.contains("older schema") == true)
    }

    @Test func anEndADaemonHoldsIsRefused() throws {
        let directory = try TemporaryDirectory()
        try filledDatabase(directory)
        let held = try DatabaseLock.acquire(databasePath: directory.path("source.db"))
        #expect(failure { () throws(CopyError) in _ = try SQLiteCopy.source(path: directory.path("source.db")) }?.contains("in use by") == true)
        #expect(failure { () throws(CopyError) in _ = try SQLiteCopy.target(path: directory.path("source.db"), now: 1) }?.contains("in use by") == true)
        held.release()
        let target = try SQLiteCopy.target(path: directory.path("target.db"), now: 1)
        // While a copy holds its ends, a daemon cannot start on them either.
        #expect(throws: DatabaseLock.Failure.self) { try DatabaseLock.acquire(databasePath: directory.path("target.db")) }
        withExtendedLifetime(target) {}
    }

    @Test func aTargetThatIsNotRosterIsRefusedUntouchedAndARosterOneCountsItsRows() throws {
        let directory = try TemporaryDirectory()
        let foreign = try Database(path: directory.path("foreign.db"))
        try foreign.execute("CREATE TABLE notes(x)")
        foreign.close()
        let before = directory.bytes("foreign.db")
        #expect(failure { () throws(CopyError) in _ = try SQLiteCopy.target(path: directory.path("foreign.db"), now: 1) }?.contains("Roster did not make") == true)
        #expect(directory.bytes("foreign.db") == before)
        try filledDatabase(directory, "full.db")
        #expect(try SQLiteCopy.target(path: directory.path("full.db"), now: 1).counts().total == 17)
    }

    // MARK: A snapshot as a backup (admin.backup on PostgreSQL)

    /// A copy's source as a snapshot: its counts, then its rows. `miscount` makes the counts say one account
    /// more than the rows hold, as a snapshot read outside its own transaction would.
    private final class SnapshotOf: SnapshotSource {
        let source: SQLiteCopy
        let miscount: Bool
        init(_ source: SQLiteCopy, miscount: Bool = false) {
            self.source = source
            self.miscount = miscount
        }

        func readSnapshot(batchSize: Int, counted: (CopyCounts) throws(CopyError) -> Void,
                          _ body: (CopyBatch) throws(CopyError) -> Void) throws(CopyError) {
            var counts = try source.counts()
            if miscount { counts.accounts += 1 }
            try counted(counts)
            try source.readAll(batchSize: batchSize, body)
        }
    }

    private func entries(_ directory: TemporaryDirectory) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.url.path)) ?? []).sorted()
    }

    @Test func aSnapshotIsPublishedAsAStandaloneRosterDatabaseHoldingEveryRow() throws {
        let directory = try TemporaryDirectory()
        try filledDatabase(directory)
        let target = directory.path("backup.db")
        let summary = try SQLiteSnapshotWriter(clock: ManualWallClock()).snapshot(from: { () throws(CopyError) in
            SnapshotOf(try SQLiteCopy.source(path: directory.path("source.db")))
        }, to: target)
        #expect(summary.path == target && summary.pages > 0 && summary.bytes == Int64(summary.pages) * 4_096)
        // Standalone: no journal beside it, rollback-journal in its header, Roster's id and schema.
        #expect(entries(directory).filter { $0.hasPrefix("backup.db") || $0.contains("partial") } == ["backup.db"])
        #expect(Array(directory.bytes("backup.db")[18...19]) == [1, 1])
        let copy = try Database(opening: target, flags: SQLITE_OPEN_READWRITE)
        #expect(try copy.pragmaValue("PRAGMA journal_mode") == "delete")
        #expect(try Migrator.appliedNames(copy) == RosterSchema.migrations.map(\.name))
        copy.close()
        #expect(try DatabaseCheck.identity(ofFileAt: target, migrations: RosterSchema.migrations) == .roster)
        #expect(entries(directory).filter { $0.hasPrefix("backup.db") } == ["backup.db"])
        // Last: `dump` opens it as the daemon does, in WAL.
        #expect(try dump(target) == dump(directory.path("source.db")))
    }

    @Test func aSnapshotThatDoesNotHoldWhatItCountedIsNotPublished() throws {
        let directory = try TemporaryDirectory()
        try filledDatabase(directory)
        let target = directory.path("backup.db")
        let result = SQLiteSnapshotWriter().write(from: { () throws(CopyError) in
            SnapshotOf(try SQLiteCopy.source(path: directory.path("source.db")), miscount: true)
        }, to: target, logger: Logger(level: .info, sink: KeptLog()))
        #expect(result == .failure(.storage(.unavailable(retryAfterMs: 1_000))))
        #expect(entries(directory) == ["source.db", "source.db.lock"].sorted())
    }

    @Test func aSourceThatCannotBeOpenedFailsAsUnavailableAndLeavesNothing() throws {
        let directory = try TemporaryDirectory()
        let result = SQLiteSnapshotWriter().write(from: { () throws(CopyError) -> any SnapshotSource in
            throw .failed("the database is down")
        }, to: directory.path("backup.db"), logger: Logger(level: .info, sink: KeptLog()))
        #expect(result == .failure(.storage(.unavailable(retryAfterMs: 1_000))))
        #expect(entries(directory).isEmpty)
    }

    /// The target is judged before the source is opened: a bad path costs no connection to the database.
    @Test func aSnapshotRefusesTheSameTargetsAsABackupBeforeOpeningTheSource() throws {
        let directory = try TemporaryDirectory()
        try Data("mine".utf8).write(to: directory.url.appendingPathComponent("existing.db"))
        mkdir(directory.path("folder"), 0o700)
        let cases: [(String, BackupRefusal)] = [
            (directory.path("existing.db"), .targetExists), (directory.path("folder"), .notARegularFile),
            (directory.path("missing/backup.db"), .badDirectory), ("/dev/null", .notARegularFile),
        ]
        for (path, refusal) in cases {
            var opened = false
            let result = SQLiteSnapshotWriter().write(from: { () throws(CopyError) -> any SnapshotSource in
                opened = true
                throw .failed("not to be opened")
            }, to: path, logger: Logger(level: .info, sink: KeptLog()))
            #expect(result == .failure(.refused(refusal)), "\(path)")
            #expect(!opened, "\(path): the source was opened")
        }
        #expect(try String(contentsOfFile: directory.path("existing.db"), encoding: .utf8) == "mine")
        #expect(!entries(directory).contains { $0.contains("partial") })
    }
}
