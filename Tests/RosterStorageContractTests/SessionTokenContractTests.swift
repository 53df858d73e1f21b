import RosterCore
import RosterRuntime
import RosterStorage
import Testing

/// Session tokens: stored by hash, resumed while used within the idle limit (each use restarting it), gone once
/// idle for the whole limit, revoked once. Idleness is measured on the backend's wall clock, moved by hand here.
@Suite("Storage contract: session tokens")
struct SessionTokenContractTests {
    private static let twelveHours: Int64 = 12 * 3_600 * 1_000

    private func token(_ byte: UInt8) -> [UInt8] { [UInt8](repeating: byte, count: 32) }

    @Test(arguments: BackendKind.allCases)
    func aTokenLivesWhileUsedAndDiesAfterTheIdleLimit(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let kate = try backend.account("kate01")
        try backend.value { storage.acting(for: charge(kate.id)).storeToken(hash: token(1), for: kate.id,
                                                                            completion: $0) }
        func resume() throws -> Account? {
            try backend.value { storage.acting(for: peerCharge).resumeToken(hash: token(1),
                                                                            idleLimitMs: Self.twelveHours,
                                                                            completion: $0) }
        }
        backend.clock.advance(byMs: Self.twelveHours - 1)
        #expect(try resume() == kate)
        // The use restarted the idle clock.
        backend.clock.advance(byMs: Self.twelveHours - 1)
        #expect(try resume() == kate)
        // Exactly the limit unused: expired, and it stays so.
        backend.clock.advance(byMs: Self.twelveHours)
        #expect(try resume() == nil)
        backend.clock.advance(byMs: -Self.twelveHours)
        #expect(try resume() == nil)
    }

    @Test(arguments: BackendKind.allCases)
    func aClockThatStepsBackNeitherExpiresNorRewindsAToken(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let lena = try backend.account("lena01")
        try backend.value { storage.acting(for: charge(lena.id)).storeToken(hash: token(2), for: lena.id,
                                                                            completion: $0) }
        backend.clock.advance(byMs: -5_000)
        #expect(try backend.value { storage.acting(for: peerCharge).resumeToken(hash: token(2), idleLimitMs: 1_000,
                                                                                completion: $0) }
                == lena)
        // Last use stayed at the later time: 999 ms after it, the token still lives.
        backend.clock.advance(byMs: 5_999)
        #expect(try backend.value { storage.acting(for: peerCharge).resumeToken(hash: token(2), idleLimitMs: 1_000,
                                                                                completion: $0) }
                == lena)
    }

    @Test(arguments: BackendKind.allCases)
    func revokingEndsOneTokenOnce(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let mona = try backend.account("mona01")
        for byte: UInt8 in [3, 4] {
            try backend.value { storage.acting(for: charge(mona.id)).storeToken(hash: token(byte), for: mona.id,
                                                                                completion: $0) }
        }
        #expect(try backend.value { storage.acting(for: charge(mona.id)).revokeToken(hash: token(3), completion: $0) })
        #expect(try !backend.value { storage.acting(for: charge(mona.id)).revokeToken(hash: token(3), completion: $0) })
        #expect(try backend.value { storage.acting(for: peerCharge).resumeToken(hash: token(3),
                                                                                idleLimitMs: Self.twelveHours,
                                                                                completion: $0) } == nil)
        #expect(try backend.value { storage.acting(for: peerCharge).resumeToken(hash: token(4),
                                                                                idleLimitMs: Self.twelveHours,
                                                                                completion: $0) } == mona)
        #expect(try backend.value { storage.acting(for: peerCharge).resumeToken(hash: token(5),
                                                                                idleLimitMs: Self.twelveHours,
                                                                                completion: $0) } == nil)
    }

    @Test(arguments: BackendKind.allCases)
    func aStoredTokenIsThereForTheNextInstance(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let nina = try backend.account("nina01")
        try backend.value { backend.storage.acting(for: charge(nina.id)).storeToken(hash: token(6), for: nina.id,
                completion: $0) }
        let reopened = try backend.reopened()
        #expect(try backend.value { reopened.acting(for: peerCharge).resumeToken(hash: token(6),
                idleLimitMs: Self.twelveHours, completion: $0) } == nina)
    }

    @Test(arguments: BackendKind.allCases)
    func pruningDropsTokensIdleForTheLimitAndKeepsTheRest(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let olga = try backend.account("olga01")
        try backend.value { storage.acting(for: charge(olga.id)).storeToken(hash: token(7), for: olga.id,
                                                                            completion: $0) }
        backend.clock.advance(byMs: 1_000)
        try backend.value { storage.acting(for: charge(olga.id)).storeToken(hash: token(8), for: olga.id,
                                                                            completion: $0) }
        backend.clock.advance(byMs: Self.twelveHours - 1_000)
        storage.pruneExpired(failureWindowMs: 60_000, tokenIdleMs: Self.twelveHours)
        try backend.settle()
        #expect(try backend.value { storage.acting(for: .daemon).revokeToken(hash: token(7), completion: $0) } == false)
        #expect(try backend.value { storage.acting(for: .daemon).revokeToken(hash: token(8), completion: $0) } == true)
    }

    /// Past the per-account cap a new token pushes out the least recently used ones, in its own transaction, with
    /// one `session_revoked` entry; another account's tokens neither count nor go, and the new one never goes.
    @Test(arguments: BackendKind.allCases)
    func aNewTokenPastTheCapRevokesTheLeastRecentlyUsedInItsTransaction(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let pia = try backend.account("pia001")
        let quinn = try backend.account("quinn1")
        let revocation = AuditRecord(event: .sessionRevoked, username: "pia001",
                                     peer: AuditPeer(uid: 1_000, pid: 7, client: "rosterctl"), reason: "session_limit")
        func store(_ byte: UInt8, for account: Account, keeping maxTokens: Int = 3) throws -> [[UInt8]] {
            let limit = TokenLimit(maxTokens: maxTokens, revocation: revocation)
            let stored = try backend.value {
                storage.acting(for: charge(account.id)).storeToken(hash: token(byte), for: account.id, client: nil,
                                                                   audit: nil, limit: limit, completion: $0)
            }
            backend.clock.advance(byMs: 1_000)
            return stored
        }
        func held() throws -> Set<[UInt8]> {
            Set(try backend.value { storage.acting(for: charge(pia.id)).sessions(of: pia.id,
                    idleLimitMs: Self.twelveHours, completion: $0) }.map(\.tokenHash))
        }
        for byte: UInt8 in [10, 11, 12] { #expect(try store(byte, for: pia) == []) }
        for byte: UInt8 in [20, 21, 22, 23] { #expect(try store(byte, for: quinn, keeping: 10) == []) }
        // 10 is used again, so 11 is now the one idle longest.
        #expect(try backend.value { storage.acting(for: peerCharge).resumeToken(hash: token(10),
                                                                                idleLimitMs: Self.twelveHours,
                                                                                completion: $0) } == pia)
        backend.clock.advance(byMs: 1_000)
        #expect(try store(13, for: pia) == [token(11)])
        #expect(try store(14, for: pia) == [token(12)])
        #expect(try held() == [token(10), token(13), token(14)])
        // A lower cap takes several at once, least recently used first.
        #expect(try store(15, for: pia, keeping: 1) == [token(10), token(13), token(14)])
        #expect(try held() == [token(15)])
        // A store that fails (the hash is there already) takes nothing with it.
        #expect((try? backend.answer { storage.acting(for: charge(pia.id)).storeToken(hash: token(15), for: pia.id,
                client: nil, audit: nil, limit: TokenLimit(maxTokens: 1, revocation: revocation),
                completion: $0) }.get()) == nil)
        #expect(try held() == [token(15)])
        for byte: UInt8 in [11, 10, 14] {
            #expect(try backend.value { storage.acting(for: peerCharge).resumeToken(hash: token(byte),
                    idleLimitMs: Self.twelveHours, completion: $0) } == nil)
        }
        let entries = try backend.value {
            storage.acting(for: .daemon).auditEntries(AuditQuery(username: "pia001", event: .sessionRevoked, limit: 10),
                                                      completion: $0)
        }
        #expect(entries.map(\.record) == [revocation, revocation, revocation], "one entry per log-in that revoked")
        #expect(backend.heard.entries.filter { $0.entry.record.event == .sessionRevoked }.map(\.entry) == entries.reversed())
        // quinn's four are all there.
        #expect(try backend.value { storage.acting(for: charge(quinn.id)).sessions(of: quinn.id,
                idleLimitMs: Self.twelveHours, completion: $0) }.count == 4)
    }
}
