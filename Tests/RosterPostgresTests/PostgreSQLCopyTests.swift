import RosterCore
@testable import RosterPostgres
import RosterPostgresTesting
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Testing

/// `--copy-database`'s PostgreSQL side: what is read is every row as stored, a copy into another database reads
/// back identical, and the copy's id sequences continue past the copied ids.
@Suite("PostgreSQL copy")
struct PostgreSQLCopyTests {
    private let hash = "$argon2id$v=19$m=8192,t=1,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA"

    private func everything(_ source: CopySource, batchSize: Int) throws -> [String] {
        var rows: [String] = []
        try source.readAll(batchSize: batchSize) { batch throws(CopyError) in
            switch batch {
            case .accounts(let accounts): rows += accounts.map { "account \($0)" }
            case .tokens(let tokens): rows += tokens.map { "token \($0)" }
            case .failures(let failures): rows += failures.map { "failure \($0)" }
            case .contacts(let contacts): rows += contacts.map { "contact \($0.account) \($0.contact)" }
            case .recoveryCodes(let codes): rows += codes.map { "code \($0)" }
            case .totp(let totp): rows += totp.map { "totp \($0)" }
            case .audit(let entries): rows += entries.map { "audit \($0)" }
            case .mail(let mails): rows += mails.map { "mail \($0)" }
            case .mailCodes(let codes): rows += codes.map { "mail code \($0)" }
            case .passkeys(let passkeys): rows += passkeys.map { "passkey \($0)" }
            case .passkeyHandles(let handles): rows += handles.map { "passkey handle \($0)" }
            case .appPasswords(let appPasswords): rows += appPasswords.map { "app password \($0)" }
            }
        }
        return rows
    }

    @Test func aCopyReadsBackIdenticalAndItsIdsContinuePastTheCopiedOnes() throws {
        let cluster = try PostgresTestCluster.shared
        let from = try cluster.createDatabase()
        let to = try cluster.createDatabase()
        let harness = try LoopHarness()
        let clock = ManualWallClock()
        let source = try PostgreSQLStorage.open(settings: PostgreSQLSettings(conninfo: from, connections: 1), loop: harness.loop,
                                                server: ServerSettings(), cores: 2, clock: clock, logger: Logger(level: .err))
        defer { source.stop() }
        func value<T>(_ call: (@escaping StorageCompletion<T>) -> Void) throws -> T { try harness.answer(call).get() }
        var owners: [AccountID] = []
        for (index, name) in ["alice1", "Bob123", "carol1"].enumerated() {
            let account = try value { source.acting(for: .daemon).createAccount(NewAccount(username: name.lowercased(), display: name,
                                                                                           email: index == 1 ? nil : "\(name)@Example.com",
                                                                                           passwordHash: hash + "\(index)"),
                                                                                completion: $0) }
            owners.append(account.id)
            clock.advance(byMs: 10)
        }
        try value { source.acting(for: .daemon).storeToken(hash: [UInt8](repeating: 1, count: 32), for: owners[0],
                                                           client: "rosterctl 1", completion: $0) }
        try value { source.acting(for: .daemon).storeToken(hash: [UInt8](repeating: 0xFE, count: 32), for: owners[2],
                                                           completion: $0) }
        // A log-in's entry with its method, and one without.
        try value { source.acting(for: .daemon).storeToken(hash: [UInt8](repeating: 2, count: 32), for: owners[1], client: nil,
                                                           audit: AuditRecord(event: .login, username: "bob123",
                                                                              peer: AuditPeer(uid: 1, pid: 2, client: nil),
                                                                              method: .passkey),
                                                           completion: $0) }
        _ = try value { source.acting(for: .daemon).appendAudit(AuditRecord(event: .backup, username: nil,
                                                                            peer: AuditPeer(uid: 0, pid: 3, client: nil)),
                                                                completion: $0) }
        try value { source.acting(for: .daemon).recordFailure(keys: ["account:alice1", "uid:1000"], completion: $0) }
        try value { source.acting(for: .daemon).replaceRecoveryCodes(of: owners[0],
                                                                     hashes: [[UInt8](repeating: 3, count: 32)],
                                                                     completion: $0) }
        try value { source.acting(for: .daemon).storePendingTOTP(of: owners[0], sealed: [9, 9], completion: $0) }
        _ = try value { source.acting(for: .daemon).confirmTOTP(of: owners[0], step: 77, completion: $0) }
        try value { source.acting(for: .daemon).storePendingTOTP(of: owners[1], sealed: [8], completion: $0) }
        let csv = "name,phone,email,note\n张三,555-0100,,\nRenée,,renee@example.com,\"a, b\"\n김민준,,,\n"
        _ = try value { source.acting(for: .daemon).importContacts(csv, format: .csv, for: owners[1], completion: $0) }
        _ = try value { source.acting(for: .daemon).addContact(ContactDraft(name: "Dan"), for: owners[0],
                                                               completion: $0) }
        // Issue 16: a copy keeps a lock (and the last log-in the tokens above moved).
        #expect(try value { source.acting(for: .daemon).lockAccount(owners[2], reason: "stolen", completion: $0) })

        let reader = try PostgreSQLCopy(conninfo: from)
        let writer = try PostgreSQLCopy(conninfo: to)
        #expect(try writer.counts() == CopyCounts())
        // A batch of two: every kind crosses batch boundaries.
        try reader.readAll(batchSize: 2) { batch throws(CopyError) in try writer.write(batch) }
        try writer.finish()
        #expect(try writer.counts() == CopyCounts(accounts: 3, tokens: 3, failures: 2, contacts: 4, recoveryCodes: 1, totp: 2,
                                                  audit: 2))
        #expect(try writer.counts() == reader.counts())
        let original = try everything(reader, batchSize: 1_000)
        #expect(original.count == 17)
        #expect(original.contains { $0.hasPrefix("audit") && $0.contains("LoginMethod.passkey") },
                "the log-in's method is read")
        #expect(original.contains { $0.contains("rosterctl 1") }, "the token's client is read")
        #expect(original.contains { $0.contains("lockedReason: Optional(\"stolen\")") }, "the lock is read")
        #expect(try everything(writer, batchSize: 3) == original)

        // The copy serves: its names still clash without regard to case, and new ids come after the copied.
        let copy = try PostgreSQLStorage.open(settings: PostgreSQLSettings(conninfo: to, connections: 1), loop: harness.loop,
                                              server: ServerSettings(), cores: 2, clock: clock, logger: Logger(level: .err))
        defer { copy.stop() }
        #expect(try harness.answer { copy.acting(for: .daemon).createAccount(NewAccount(username: "bob123", display: "BOB123", email: nil,
                                                                                        passwordHash: hash), completion: $0) }
                .map(\.id) == .failure(.conflict(.username)))
        let next = try value { copy.acting(for: .daemon).createAccount(NewAccount(username: "dave01", display: "dave01", email: nil,
                                                                                  passwordHash: hash), completion: $0) }
        #expect(next.id > owners.max() ?? 0)
        let contact = try value { copy.acting(for: .daemon).addContact(ContactDraft(name: "Eve"), for: next.id,
                                                                       completion: $0) }
        #expect(try value { copy.acting(for: .daemon).credential(for: .email("ALICE1@example.com"),
                                                                 completion: $0) }?.passwordHash
                == hash + "0")
        #expect(contact.contact.id > 4)
        #expect(try value { copy.acting(for: .daemon).credential(of: owners[0], completion: $0) }?.totp
                == TOTPSeal(sealed: [9, 9], lastStep: 77))
        #expect(try value { copy.acting(for: .daemon).security(of: owners[1], completion: $0) }
                == AccountSecurity(totp: nil, pendingTOTP: [8], recoveryCodesLeft: 0))
        #expect(try value { copy.acting(for: .daemon).credential(for: .username("carol1"),
                                                                 completion: $0) }?.account.locked == true)
        #expect(try value { copy.acting(for: .daemon).accountSummary(.username("alice1"),
                                                                     completion: $0) }?.lastLoginAtMs != nil)
    }

    /// `admin.backup`'s read: the counts and every row come from one snapshot, so what commits while it reads
    /// (between the counts and the rows, and between two pages) is in neither.
    @Test func aSnapshotsCountsAndRowsAreOneSnapshotWhateverCommitsMeanwhile() throws {
        let conninfo = try PostgresTestCluster.shared.createDatabase()
        let writer = try PostgreSQLCopy(conninfo: conninfo)
        func account(_ id: Int64) -> CopiedAccount {
            CopiedAccount(account: Account(id: id, username: "user\(id)", display: "user\(id)", email: nil, createdAtMs: id),
                          passwordHash: hash)
        }
        // Each write committed on its own (`finish` commits what a copy wrote), as a daemon's would be.
        try writer.write(.accounts((1...3).map(account)))
        try writer.finish()
        let reader = try PostgreSQLCopy(conninfo: conninfo, statementTimeoutMs: 60_000)
        var counted: CopyCounts?
        var read: [AccountID] = []
        try reader.readSnapshot(batchSize: 2, counted: { counts throws(CopyError) in
            counted = counts
            try writer.write(.accounts([account(4)]))
            try writer.finish()
        }) { batch throws(CopyError) in
            guard case .accounts(let accounts) = batch else { return }
            read += accounts.map(\.account.id)
            if read.count == 2 {
                try writer.write(.accounts([account(5)]))
                try writer.finish()
            }
        }
        #expect(counted?.accounts == 3)
        #expect(read == [1, 2, 3])
        #expect(try reader.counts().accounts == 5, "the writes did not commit")
    }

    @Test func aRowThatPostgreSQLCannotHoldStopsTheCopyAndWritesNothingOfItsBatch() throws {
        let writer = try PostgreSQLCopy(conninfo: try PostgresTestCluster.shared.createDatabase())
        let account = Account(id: 5, username: "alice1", display: "alice1", email: nil, createdAtMs: 0)
        try writer.write(.accounts([CopiedAccount(account: account, passwordHash: hash)]))
        let contacts: [(account: AccountID, contact: StoredContact, card: String?)] = ["Fine", "Cut\u{0}Short"].enumerated().map { index, name in
            let draft = ContactDraft(name: name)
            return (account: 5, contact: StoredContact(contact: Contact(id: Int64(index + 1), draft: draft, createdAt: 0, updatedAt: 0),
                                                      keys: ContactSearchKeys(draft: draft)), card: nil)
        }
        #expect(throws: CopyError.self) { try writer.write(.contacts(contacts)) }
        #expect(try writer.counts() == CopyCounts(accounts: 1))
    }

    @Test func aDatabaseThatIsNotRostersIsNeitherReadNorWritten() throws {
        let cluster = try PostgresTestCluster.shared
        let conninfo = try cluster.createDatabase()
        try cluster.psql("CREATE TABLE orders(id int)", database: String(conninfo.split(separator: "=").last ?? ""))
        #expect(throws: CopyError.self) { try PostgreSQLCopy(conninfo: conninfo) }
        #expect(throws: CopyError.self) { try PostgreSQLCopy(conninfo: cluster.conninfo(database: "no_such_database")) }
    }
}
