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
        try backend.value { storage.storeToken(hash: token(1), for: kate.id, charge: charge(kate.id), completion: $0) }
        func resume() throws -> Account? {
            try backend.value { storage.resumeToken(hash: token(1), idleLimitMs: Self.twelveHours, charge: peerCharge,
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
        try backend.value { storage.storeToken(hash: token(2), for: lena.id, charge: charge(lena.id), completion: $0) }
        backend.clock.advance(byMs: -5_000)
        #expect(try backend.value { storage.resumeToken(hash: token(2), idleLimitMs: 1_000, charge: peerCharge, completion: $0) }
                == lena)
        // Last use stayed at the later time: 999 ms after it, the token still lives.
        backend.clock.advance(byMs: 5_999)
        #expect(try backend.value { storage.resumeToken(hash: token(2), idleLimitMs: 1_000, charge: peerCharge, completion: $0) }
                == lena)
    }

    @Test(arguments: BackendKind.allCases)
    func revokingEndsOneTokenOnce(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let mona = try backend.account("mona01")
        for byte: UInt8 in [3, 4] {
            try backend.value { storage.storeToken(hash: token(byte), for: mona.id, charge: charge(mona.id), completion: $0) }
        }
        #expect(try backend.value { storage.revokeToken(hash: token(3), charge: charge(mona.id), completion: $0) })
        #expect(try !backend.value { storage.revokeToken(hash: token(3), charge: charge(mona.id), completion: $0) })
        #expect(try backend.value { storage.resumeToken(hash: token(3), idleLimitMs: Self.twelveHours, charge: peerCharge,
                                                        completion: $0) } == nil)
        #expect(try backend.value { storage.resumeToken(hash: token(4), idleLimitMs: Self.twelveHours, charge: peerCharge,
                                                        completion: $0) } == mona)
        #expect(try backend.value { storage.resumeToken(hash: token(5), idleLimitMs: Self.twelveHours, charge: peerCharge,
                                                        completion: $0) } == nil)
    }

    @Test(arguments: BackendKind.allCases)
    func aStoredTokenIsThereForTheNextInstance(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let nina = try backend.account("nina01")
        try backend.value { backend.storage.storeToken(hash: token(6), for: nina.id, charge: charge(nina.id), completion: $0) }
        let reopened = try backend.reopened()
        #expect(try backend.value { reopened.resumeToken(hash: token(6), idleLimitMs: Self.twelveHours, charge: peerCharge,
                                                         completion: $0) } == nina)
    }

    @Test(arguments: BackendKind.allCases)
    func pruningDropsTokensIdleForTheLimitAndKeepsTheRest(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let olga = try backend.account("olga01")
        try backend.value { storage.storeToken(hash: token(7), for: olga.id, charge: charge(olga.id), completion: $0) }
        backend.clock.advance(byMs: 1_000)
        try backend.value { storage.storeToken(hash: token(8), for: olga.id, charge: charge(olga.id), completion: $0) }
        backend.clock.advance(byMs: Self.twelveHours - 1_000)
        storage.pruneExpired(failureWindowMs: 60_000, tokenIdleMs: Self.twelveHours)
        try backend.settle()
        #expect(try backend.value { storage.revokeToken(hash: token(7), charge: .daemon, completion: $0) } == false)
        #expect(try backend.value { storage.revokeToken(hash: token(8), charge: .daemon, completion: $0) } == true)
    }
}
