import RosterCore
import RosterPostgres
import RosterPostgresTesting
import RosterRuntime
import RosterStorage
@testable import RosterSQLite
import Testing

/// `--copy-database` carries the app passwords both ways between SQLite and PostgreSQL: each keeps its id, name,
/// hash and times, so a CardDAV client set up before the copy still logs in after it (under the same key file).
@Suite("Copying app passwords between SQLite and PostgreSQL")
struct AppPasswordCopyTests {
    private func hash(_ byte: UInt8) -> [UInt8] { [UInt8](repeating: byte, count: AppPasswordLimits.hashBytes) }

    @Test func appPasswordsGoFromSQLiteToPostgreSQLAndBack() throws {
        let directory = try TemporaryDirectory()
        let clock = ManualWallClock()
        let first = try CopyEnds.sqlite(directory.path("first.db"), directory, clock: clock)
        let data = first.storage.acting(for: .daemon)
        let alice = try first.account("alice1")
        let bob = try first.account("bobby1")
        let rows = [StoredAppPassword(id: "aaaabbbbccccdddd", account: alice.id, name: "DAVx5", hash: hash(1)),
                    StoredAppPassword(id: "eeeeffffgggghhhh", account: alice.id, name: "Thunderbird “laptop”", hash: hash(2)),
                    StoredAppPassword(id: "iiiijjjjkkkkllll", account: bob.id, name: "iOS 연락처", hash: hash(3))]
        for row in rows {
            clock.advance(byMs: 1_000)
            #expect(try first.value { data.addAppPassword(row, limit: AppPasswordLimits.perAccount, audit: nil,
                                                          completion: $0) }.isAdded)
        }
        #expect(try first.value { data.touchAppPassword(of: alice.id, id: rows[1].id, usedMs: 99_000, completion: $0) })
        let original = [try first.value { data.appPasswords(of: alice.id, completion: $0) },
                        try first.value { data.appPasswords(of: bob.id, completion: $0) }]
        #expect(original.map(\.count) == [2, 1] && original[0].last?.lastUsedMs == 99_000)
        first.storage.stop()
        (first.storage as? SQLiteStorage)?.releaseLock()

        let cluster = try PostgresTestCluster.shared
        let conninfo = try cluster.createDatabase()
        do {
            try CopyEnds.copy(try SQLiteCopy.source(path: directory.path("first.db")), try PostgreSQLCopy(conninfo: conninfo))
        }
        do {
            let source = try PostgreSQLCopy(conninfo: conninfo)
            #expect(try source.counts().appPasswords == 3)
            try CopyEnds.copy(source, try SQLiteCopy.target(path: directory.path("back.db"), now: 1))
        }
        let targets = [try CopyEnds.postgres(conninfo, clock: clock),
                       try CopyEnds.sqlite(directory.path("back.db"), directory, clock: clock)]
        for target in targets {
            let copied = target.storage.acting(for: .daemon)
            #expect(try target.value { copied.appPasswords(of: alice.id, completion: $0) } == original[0])
            #expect(try target.value { copied.appPasswords(of: bob.id, completion: $0) } == original[1])
        }
    }
}
