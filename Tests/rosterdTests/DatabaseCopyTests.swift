import RosterCore
import RosterStorage
import Testing
@testable import rosterd

/// `rosterd --copy-database`'s driver, on ends held in memory. The SQLite end is `SQLiteCopyTests`, the
/// real daemon's round trips are in rosterdTests.
@Suite("Copying a database")
struct DatabaseCopyTests {
    /// A database in memory: batches in, batches out, and what it was asked to do.
    final class MemoryEnd: CopySource, CopyTarget {
        var accounts: [CopiedAccount] = []
        var tokens: [CopiedToken] = []
        var failures: [CopiedFailure] = []
        var contacts: [(account: AccountID, contact: StoredContact, card: String?)] = []
        var codes: [CopiedRecoveryCode] = []
        var totp: [CopiedTOTP] = []
        var audit: [AuditEntry] = []
        var mail: [CopiedMail] = []
        var mailCodes: [CopiedMailCode] = []
        var passkeys: [StoredPasskey] = []
        var passkeyHandles: [CopiedPasskeyHandle] = []
        var appPasswords: [StoredAppPassword] = []
        var finished = false
        var calls: [String] = []
        /// The key check value the database keeps, if any.
        var keyCheck: String?
        /// Rows of each batch the target drops: a backend that loses writes.
        var dropping = 0

        init(accounts: Int = 0, tokens: Int = 0, contacts: Int = 0, codes: Int = 0, totp: Int = 0, audit: Int = 0) {
            self.accounts = (0..<accounts).map { id in
                CopiedAccount(account: Account(id: Int64(id + 1), username: "user\(id)", display: "user\(id)", email: nil,
                                               createdAtMs: 1),
                              passwordHash: "$argon2id$x")
            }
            self.tokens = (0..<tokens).map { CopiedToken(hash: [UInt8(truncatingIfNeeded: $0)], account: 1, createdAtMs: 1, lastUsedAtMs: 1) }
            self.contacts = (0..<contacts).map { id in
                (account: 1, contact: StoredContact(contact: Contact(id: Int64(id + 1), draft: ContactDraft(name: "c\(id)"),
                                                                     createdAt: 1, updatedAt: 1),
                                                    keys: ContactSearchKeys(draft: ContactDraft(name: "c\(id)"))),
                 card: nil)
            }
            self.codes = (0..<codes).map { CopiedRecoveryCode(account: 1, hash: [UInt8(truncatingIfNeeded: $0)]) }
            self.totp = (0..<totp).map { CopiedTOTP(account: Int64($0 + 1), sealed: [1], pending: nil, lastStep: 9) }
            self.audit = (0..<audit).map {
                AuditEntry(id: Int64($0 + 1), timeMs: 1, record: AuditRecord(event: .register, username: "user\($0)",
                                                                          peer: AuditPeer(uid: 0, pid: 1, client: nil)))
            }
        }

        func counts() throws(CopyError) -> CopyCounts {
            calls.append("counts")
            return CopyCounts(accounts: accounts.count, tokens: tokens.count, failures: failures.count, contacts: contacts.count,
                              recoveryCodes: codes.count, totp: totp.count, audit: audit.count, mail: mail.count,
                              mailCodes: mailCodes.count, passkeys: passkeys.count, passkeyHandles: passkeyHandles.count,
                              appPasswords: appPasswords.count)
        }

        func readAll(batchSize: Int, _ body: (CopyBatch) throws(CopyError) -> Void) throws(CopyError) {
            calls.append("readAll")
            for start in stride(from: 0, to: accounts.count, by: batchSize) {
                try body(.accounts(Array(accounts[start..<min(start + batchSize, accounts.count)])))
            }
            for start in stride(from: 0, to: tokens.count, by: batchSize) {
                try body(.tokens(Array(tokens[start..<min(start + batchSize, tokens.count)])))
            }
            for start in stride(from: 0, to: contacts.count, by: batchSize) {
                try body(.contacts(Array(contacts[start..<min(start + batchSize, contacts.count)])))
            }
            for start in stride(from: 0, to: codes.count, by: batchSize) {
                try body(.recoveryCodes(Array(codes[start..<min(start + batchSize, codes.count)])))
            }
            for start in stride(from: 0, to: totp.count, by: batchSize) {
                try body(.totp(Array(totp[start..<min(start + batchSize, totp.count)])))
            }
            for start in stride(from: 0, to: audit.count, by: batchSize) {
                try body(.audit(Array(audit[start..<min(start + batchSize, audit.count)])))
            }
        }

        func write(_ batch: CopyBatch) throws(CopyError) {
            calls.append("write")
            switch batch {
            case .accounts(let rows): accounts += rows.dropLast(dropping)
            case .tokens(let rows): tokens += rows.dropLast(dropping)
            case .failures(let rows): failures += rows.dropLast(dropping)
            case .contacts(let rows): contacts += rows.dropLast(dropping)
            case .recoveryCodes(let rows): codes += rows.dropLast(dropping)
            case .totp(let rows): totp += rows.dropLast(dropping)
            case .audit(let rows): audit += rows.dropLast(dropping)
            case .mail(let rows): mail += rows.dropLast(dropping)
            case .mailCodes(let rows): mailCodes += rows.dropLast(dropping)
            case .passkeys(let rows): passkeys += rows.dropLast(dropping)
            case .passkeyHandles(let rows): passkeyHandles += rows.dropLast(dropping)
            case .appPasswords(let rows): appPasswords += rows.dropLast(dropping)
            }
        }

        func finish() throws(CopyError) {
            calls.append("finish")
            finished = true
        }

        func keyCheckValue() throws(CopyError) -> String? {
            calls.append("keyCheckValue")
            return keyCheck
        }

        func storeKeyCheckValue(_ value: String) throws(CopyError) {
            calls.append("storeKeyCheckValue")
            keyCheck = value
        }
    }

    private func copyError(_ body: () throws(CopyError) -> Void) -> CopyError? {
        do throws(CopyError) {
            try body()
            return nil
        } catch {
            return error
        }
    }

    @Test func everyRowGoesOverInBatchesWithProgressThenTheTargetIsFinishedAndCounted() throws {
        let source = MemoryEnd(accounts: 5, tokens: 2, contacts: 3, codes: 3, totp: 1, audit: 3)
        source.keyCheck = "6fefcc35"
        let target = MemoryEnd()
        var progress: [Int] = []
        let counts = try DatabaseCopy.run(from: source, to: target, batchSize: 2) { progress.append($0.copied.total) }
        #expect(counts == CopyCounts(accounts: 5, tokens: 2, contacts: 3, recoveryCodes: 3, totp: 1, audit: 3))
        #expect(target.accounts == source.accounts && target.tokens == source.tokens)
        #expect(target.contacts.map(\.contact) == source.contacts.map(\.contact))
        #expect(target.codes == source.codes && target.totp == source.totp && target.audit == source.audit)
        // Accounts 2+2+1, tokens 2, contacts 2+1, codes 2+1, TOTP 1, audit 2+1: one write and one progress report
        // a batch.
        #expect(progress == [2, 4, 5, 7, 9, 10, 12, 13, 14, 16, 17])
        #expect(target.calls == ["counts"] + Array(repeating: "write", count: 11) + ["storeKeyCheckValue", "finish", "counts"])
        #expect(source.calls == ["counts", "readAll", "keyCheckValue", "counts"])
        #expect(target.keyCheck == source.keyCheck)
    }

    @Test func aTargetWithAnyRowIsRefusedBeforeAnythingIsReadOrWritten() {
        for target in [MemoryEnd(accounts: 1), MemoryEnd(tokens: 1), MemoryEnd(contacts: 1), MemoryEnd(audit: 1)] {
            let existing = CopyCounts(accounts: target.accounts.count, tokens: target.tokens.count,
                                      contacts: target.contacts.count, audit: target.audit.count)
            let source = MemoryEnd(accounts: 3)
            #expect(copyError { () throws(CopyError) in _ = try DatabaseCopy.run(from: source, to: target) } == .targetNotEmpty(existing))
            #expect(source.calls.isEmpty)
            #expect(target.calls == ["counts"])
        }
    }

    @Test func aTargetThatEndsWithOtherCountsFailsTheCopy() {
        let source = MemoryEnd(accounts: 3, contacts: 2)
        let target = MemoryEnd()
        target.dropping = 1
        let error = copyError { () throws(CopyError) in _ = try DatabaseCopy.run(from: source, to: target, batchSize: 10) }
        #expect(error == .countsDiffer(source: CopyCounts(accounts: 3, contacts: 2), target: CopyCounts(accounts: 2, contacts: 1)))
        #expect(target.finished)
    }

    @Test func anEndIsSqliteOrPostgresqlAndAPasswordNeverShows() throws {
        #expect(DatabaseEndpoint(parsing: "sqlite:/var/lib/roster/roster.db") == .sqlite(path: "/var/lib/roster/roster.db"))
        #expect(DatabaseEndpoint(parsing: "postgresql:host=/run/postgresql dbname=roster")
                == .postgresql(conninfo: "host=/run/postgresql dbname=roster"))
        for bad in ["sqlite:", "postgresql:", "/var/lib/roster/roster.db", "mysql:x", "SQLITE:/x"] {
            #expect(DatabaseEndpoint(parsing: bad) == nil, "\(bad)")
        }
        // Conninfo.masked's own tests cover every spelling; here, that an end is shown through it.
        let keyword = DatabaseEndpoint.postgresql(conninfo: "host=db password=s3cret dbname=roster")
        #expect(keyword.description == "postgresql:host=db password=\(Conninfo.mask) dbname=roster")
        let uri = DatabaseEndpoint.postgresql(conninfo: "postgresql://roster:s3cret@db/roster")
        #expect(!uri.description.contains("s3cret"))

        let options = try DaemonOptions.parse(["--copy-database", "sqlite:/a.db", "postgresql:dbname=roster"])
        #expect(options.mode == .copyDatabase(from: .sqlite(path: "/a.db"), to: .postgresql(conninfo: "dbname=roster")))
        #expect(throws: DaemonOptions.UsageError.self) { try DaemonOptions.parse(["--copy-database", "sqlite:/a.db"]) }
        #expect(throws: DaemonOptions.UsageError.self) { try DaemonOptions.parse(["--copy-database", "/a.db", "sqlite:/b.db"]) }
    }
}
