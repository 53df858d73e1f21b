import RosterCore
import RosterPostgres
import RosterPostgresTesting
import RosterRuntime
import RosterStorage
@testable import RosterSQLite
import Testing

/// `--copy-database` carries the passkeys and the user handles both ways between SQLite and PostgreSQL: every
/// passkey keeps its key, count, transports, name and times, every account its handle (which its authenticators
/// hold), so a passkey registered before the copy logs in after it, its count still only moving forward, and its
/// credential id is still its account's alone.
@Suite("Copying passkeys between SQLite and PostgreSQL")
struct PasskeyCopyTests {
    private func bytes(_ byte: UInt8, _ count: Int = 32) -> [UInt8] { [UInt8](repeating: byte, count: count) }

    @Test func passkeysAndHandlesGoFromSQLiteToPostgreSQLAndBack() throws {
        let directory = try TemporaryDirectory()
        let clock = ManualWallClock()
        let first = try CopyEnds.sqlite(directory.path("first.db"), directory, clock: clock)
        let data = first.storage.acting(for: .daemon)
        let alice = try first.account("alice1")
        let bob = try first.account("bobby1")
        let carol = try first.account("carol1")
        #expect(try first.value { data.passkeyUserHandle(of: alice.id, candidate: bytes(0xA1), completion: $0) } == bytes(0xA1))
        #expect(try first.value { data.passkeyUserHandle(of: bob.id, candidate: bytes(0xB0, 64), completion: $0) }
                == bytes(0xB0, 64))
        let keys = [
            StoredPasskey(credentialID: bytes(1, 16), account: alice.id, algorithm: -7, publicKey: bytes(7, 64), signCount: 0,
                          transports: ["usb", "nfc"], name: "YubiKey"),
            StoredPasskey(credentialID: bytes(2, 1_023), account: alice.id, algorithm: -8, publicKey: bytes(8), signCount: 41,
                          transports: [], name: "phone \"hybrid\""),
            StoredPasskey(credentialID: bytes(3, 1), account: bob.id, algorithm: -7, publicKey: bytes(9, 64),
                          signCount: .max - 1, transports: ["internal", "a,b\u{0}"], name: "키"),
        ]
        for key in keys {
            clock.advance(byMs: 1_000)
            #expect(try first.value { data.addPasskey(key, limit: PasskeyLimits.perAccount, audit: nil, completion: $0) }
                        .isAdded)
        }
        clock.advance(byMs: 1_000)
        #expect(try first.value { data.usePasskey(credentialID: keys[1].credentialID, signCount: 42, usedMs: 99_000,
                                                  completion: $0) } != .gone)
        let original = [try first.value { data.passkeys(of: alice.id, completion: $0) },
                        try first.value { data.passkeys(of: bob.id, completion: $0) }]
        #expect(original.map(\.count) == [2, 1])
        #expect(original[0].last?.lastUsedMs == 99_000)
        first.storage.stop()
        (first.storage as? SQLiteStorage)?.releaseLock()

        let cluster = try PostgresTestCluster.shared
        let conninfo = try cluster.createDatabase()
        do {
            try CopyEnds.copy(try SQLiteCopy.source(path: directory.path("first.db")), try PostgreSQLCopy(conninfo: conninfo))
        }
        let second = try cluster.createDatabase()
        do { try CopyEnds.copy(try PostgreSQLCopy(conninfo: conninfo), try PostgreSQLCopy(conninfo: second)) }
        do {
            let source = try PostgreSQLCopy(conninfo: second)
            #expect(try source.counts().passkeys == 3 && source.counts().passkeyHandles == 2)
            try CopyEnds.copy(source, try SQLiteCopy.target(path: directory.path("back.db"), now: 1))
        }

        let targets = [try CopyEnds.postgres(second, clock: clock),
                       try CopyEnds.sqlite(directory.path("back.db"), directory, clock: clock)]
        for target in targets {
            let copied = target.storage.acting(for: .daemon)
            #expect(try target.value { copied.passkeys(of: alice.id, completion: $0) } == original[0])
            #expect(try target.value { copied.passkeys(of: bob.id, completion: $0) } == original[1])
            #expect(try target.value { copied.passkeys(of: carol.id, completion: $0) } == [])
            // The handles stay what the authenticators hold, and find their accounts.
            #expect(try target.value { copied.passkeyUserHandle(of: alice.id, candidate: bytes(0xFF), completion: $0) }
                    == bytes(0xA1))
            #expect(try target.value { copied.account(forUserHandle: bytes(0xB0, 64), completion: $0) }?.username
                    == "bobby1")
            #expect(try target.value { copied.passkey(credentialID: bytes(3, 1), completion: $0) }?.account.id == bob.id)
            // The counts go on from where they were, and an id is still its account's.
            #expect(try target.value { copied.usePasskey(credentialID: keys[1].credentialID, signCount: 42, usedMs: 1,
                                                         completion: $0) } == .counterWentBack(stored: 42))
            #expect(try target.value { copied.usePasskey(credentialID: keys[2].credentialID, signCount: .max, usedMs: 2,
                                                         completion: $0) } != .gone)
            var stolen = keys[0]
            stolen.account = carol.id
            #expect(try target.value { copied.addPasskey(stolen, limit: PasskeyLimits.perAccount, audit: nil,
                                                         completion: $0) } == .duplicate)
        }
    }
}
