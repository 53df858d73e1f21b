import RosterCore
import RosterPostgres
import RosterPostgresTesting
import RosterRuntime
import RosterStorage
@testable import RosterSQLite
import Testing

/// `--copy-database` carries the outbox and the mailed codes both ways between SQLite and PostgreSQL: nothing
/// queued is lost, every row keeps its status, attempts, claim and times, a code in flight still works on the
/// target, a verified email stays verified, and the target's next mail gets an id past every copied one (a sender
/// finishing a hand-off by id must never mark another mail).
@Suite("Copying the outbox between SQLite and PostgreSQL")
struct MailCopyTests {
    private func hash(_ byte: UInt8) -> [UInt8] { [UInt8](repeating: byte, count: 32) }

    private func outbox(_ backend: Backend) throws -> [MailListing] {
        try backend.value { backend.storage.acting(for: .daemon).listMail(status: nil, limit: 100, completion: $0) }
    }

    private func notice(_ account: Account, _ byte: UInt8) -> QueuedMail {
        QueuedMail(account: account.id, kind: .passwordChanged, recipient: "alice@example.com", sealedMessage: [byte])
    }

    @Test func theOutboxAndTheCodesGoFromSQLiteToPostgreSQLAndBack() throws {
        let directory = try TemporaryDirectory()
        let clock = ManualWallClock()
        let first = try CopyEnds.sqlite(directory.path("first.db"), directory, clock: clock)
        let storage = first.storage
        let alice = try first.account("alice1", email: "alice@example.com")
        let bob = try first.account("bobby1", email: "bob@example.com")
        func queueCode(_ account: Account, _ purpose: MailCodePurpose, _ code: UInt8) throws {
            let mail = QueuedMail(account: account.id, kind: purpose.kind, recipient: account.email ?? "", sealedMessage: [code],
                                  code: NewMailCode(purpose: purpose, codeHash: hash(code), expiresAtMs: .max,
                                                    email: account.email ?? ""))
            #expect(try first.value { storage.acting(for: .daemon).queueCodeMail(of: account.id, mail, minimumIntervalMs: 0,
                                                                                 audit: nil, completion: $0) }.isQueued)
        }
        try queueCode(alice, .verifyEmail, 1)
        try queueCode(alice, .recover, 2)
        try queueCode(bob, .verifyEmail, 3)
        for byte: UInt8 in 4...6 {
            clock.advance(byMs: 1_000)
            try first.value { storage.acting(for: .daemon).removeTOTP(of: alice.id, audit: nil, mail: [notice(alice, byte)],
                                                                      completion: $0) }
        }
        // Bob's email is verified; of the mails, one is sent, one failed, one waits for a retry, one is claimed.
        #expect(try first.value { storage.acting(for: .daemon).verifyEmail(of: bob.id, codeHash: hash(3),
                nowMs: clock.nowMs(), audit: nil, completion: $0) } == .verified(email: "bob@example.com"))
        let now = clock.nowMs()
        let claimed = try first.value { storage.acting(for: .daemon).claimDueMail(claimant: "old", nowMs: now, leaseMs: 60_000,
                                                                                  limit: 4, completion: $0) }
        #expect(claimed.count == 4)
        for (mail, outcome) in zip(claimed, [MailHandOffResult.sent(atMs: now + 1), .failed(error: "gave_up"),
                                             .retry(nextAttemptAtMs: now + 120_000, error: "exit_status_75")]) {
            #expect(try first.value { storage.acting(for: .daemon).finishMail(mail.id, claimant: "old", outcome: outcome,
                                                                              audit: nil, completion: $0) })
        }
        let original = try outbox(first)
        #expect(original.map(\.status) == [.queued, .queued, .queued, .queued, .failed, .sent])
        storage.stop()
        (storage as? SQLiteStorage)?.releaseLock()

        let cluster = try PostgresTestCluster.shared
        let conninfo = try cluster.createDatabase()
        do {
            try CopyEnds.copy(try SQLiteCopy.source(path: directory.path("first.db")), try PostgreSQLCopy(conninfo: conninfo))
        }
        let second = try cluster.createDatabase()
        do { try CopyEnds.copy(try PostgreSQLCopy(conninfo: conninfo), try PostgreSQLCopy(conninfo: second)) }
        do {
            try CopyEnds.copy(try PostgreSQLCopy(conninfo: second), try SQLiteCopy.target(path: directory.path("back.db"), now: 1))
        }

        let targets = [try CopyEnds.postgres(second, clock: clock),
                       try CopyEnds.sqlite(directory.path("back.db"), directory, clock: clock)]
        for target in targets {
            let data = target.storage.acting(for: .daemon)
            #expect(try outbox(target) == original)
            #expect(try target.value { data.credential(for: .username("bobby1"), completion: $0) }?.account.emailVerified == true)
            #expect(try target.value { data.credential(for: .username("alice1"), completion: $0) }?.account.emailVerified == false)
            // The old daemon's claim still holds its row until its lease ends, then the row is anyone's.
            #expect(try target.value { data.claimDueMail(claimant: "new", nowMs: now, leaseMs: 1_000_000, limit: 10,
                                                         completion: $0) }.map(\.id) == [original[1].id, original[0].id])
            let later = try target.value { data.claimDueMail(claimant: "new", nowMs: now + 120_000, leaseMs: 1, limit: 10,
                                                             completion: $0) }
            #expect(later.map(\.id) == [original[2].id, original[3].id])
            #expect(later.map(\.attempts) == [0, 1])
            // Codes still work, and the next mail's id is past every copied one.
            #expect(try target.value { data.redeemMailedCode(of: alice.id, codeHash: hash(2), nowMs: now,
                    newPasswordHash: placeholderHash, audit: nil, mail: [notice(alice, 9)], completion: $0) }.isRedeemed)
            #expect(try outbox(target).first.map(\.id) ?? 0 > original.map(\.id).max() ?? 0)
        }
    }
}
