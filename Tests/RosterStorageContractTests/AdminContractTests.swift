import RosterCore
import RosterRuntime
import RosterStorage
import Testing

/// What an administrator does to accounts (protocol.md §Administering users), alike on every backend: a lock makes log-in and resume see
/// `locked` and leaves the tokens dead, an unlock deletes them; the list finds a part of a username or an email
/// without regard to ASCII case, in username order, a page at a time with the total; a reset clears only the keys
/// it names; the last log-in follows a stored token and a resume.
@Suite("Storage contract: administration")
struct AdminContractTests {
    private static let twelveHours: Int64 = 12 * 3_600 * 1_000

    private func token(_ byte: UInt8) -> [UInt8] { [UInt8](repeating: byte, count: 32) }

    private func resumes(_ byte: UInt8, _ backend: Backend) throws -> Account? {
        try backend.value { backend.storage.acting(for: peerCharge).resumeToken(hash: token(byte),
                                                                                idleLimitMs: Self.twelveHours,
                                                                                completion: $0) }
    }

    private func summary(_ identifier: AccountIdentifier, _ backend: Backend) throws -> AccountSummary? {
        try backend.value { backend.storage.acting(for: peerCharge).accountSummary(identifier, completion: $0) }
    }

    private func list(_ query: String?, limit: Int = 100, offset: Int = 0, _ backend: Backend) throws -> AccountPage {
        try backend.value { backend.storage.acting(for: peerCharge).listAccounts(matching: query, limit: limit,
                offset: offset, completion: $0) }
    }

    @Test(arguments: BackendKind.allCases)
    func aLockLeavesTheTokensDeadAndAnUnlockDeletesThem(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let alice = try backend.account("alice1", email: "alice@example.com")
        let bob = try backend.account("bobby1")
        for (byte, owner) in [(1, alice), (2, alice), (3, bob)] as [(UInt8, Account)] {
            try backend.value { storage.acting(for: charge(owner.id)).storeToken(hash: token(byte), for: owner.id,
                    completion: $0) }
        }
        let start = backend.clock.nowMs()
        #expect(try backend.value { storage.acting(for: peerCharge).lockAccount(alice.id, reason: "stolen laptop",
                                                                                completion: $0) })
        backend.clock.advance(byMs: 1_000)
        // A second lock keeps the first time and takes the new reason.
        #expect(try backend.value { storage.acting(for: peerCharge).lockAccount(alice.id, reason: "phished",
                                                                                completion: $0) })

        var locked = alice
        locked.locked = true
        #expect(try backend.value { storage.acting(for: peerCharge).credential(for: .email("alice@example.com"),
                                                                               completion: $0) }?.account == locked)
        #expect(try resumes(1, backend) == locked)
        #expect(try resumes(2, backend) == locked)
        #expect(try resumes(3, backend) == bob)
        let seen = try summary(.username("ALICE1"), backend)
        #expect(seen?.account == locked)
        #expect(seen?.lockedAtMs == start)
        #expect(seen?.lockedReason == "phished")

        #expect(try backend.value { storage.acting(for: peerCharge).unlockAccount(alice.id, completion: $0) })
        #expect(try resumes(1, backend) == nil)
        #expect(try resumes(2, backend) == nil)
        #expect(try resumes(3, backend) == bob)
        #expect(try backend.value { storage.acting(for: peerCharge).credential(for: .username("alice1"),
                                                                               completion: $0) }?.account == alice)
        let unlocked = try summary(.username("alice1"), backend)
        #expect(unlocked?.lockedAtMs == nil)
        #expect(unlocked?.lockedReason == nil)

        // A gone account is no failure: false, and nothing changes.
        #expect(try !backend.value { storage.acting(for: peerCharge).lockAccount(9_999, reason: nil, completion: $0) })
        #expect(try !backend.value { storage.acting(for: peerCharge).unlockAccount(9_999, completion: $0) })
    }

    @Test(arguments: BackendKind.allCases)
    func theListFindsAPartOfAUsernameOrEmailInUsernameOrderAPageAtATime(_ kind: BackendKind) throws {
        let backend = try kind.make()
        for (name, email) in [("carol1", "c@corp.example"), ("alice1", "alice@home.example"), ("bobby1", nil),
                              ("dave_1", "d@corp.example"), ("daveX1", nil)] as [(String, String?)] {
            _ = try backend.account(name, email: email)
        }
        let all = try list(nil, backend)
        // By username without regard to ASCII case, bytewise otherwise: `_` (0x5F) before `x`.
        #expect(all.items.map(\.account.username) == ["alice1", "bobby1", "carol1", "dave_1", "daveX1"])
        #expect(all.total == 5)
        #expect(try list("", backend).total == 5)
        #expect(try list("CORP", backend).items.map(\.account.username) == ["carol1", "dave_1"])
        #expect(try list("lic", backend).items.map(\.account.username) == ["alice1"])
        // `_` and `%` are characters, not patterns.
        #expect(try list("_", backend).items.map(\.account.username) == ["dave_1"])
        #expect(try list("%", backend).total == 0)
        let page = try list("1", limit: 2, offset: 1, backend)
        #expect(page.items.map(\.account.username) == ["bobby1", "carol1"])
        #expect(page.total == 5)
        #expect(try list("1", limit: 2, offset: 10, backend).items.isEmpty)
        #expect(try list("nobody", backend) == AccountPage(items: [], total: 0))
    }

    @Test(arguments: BackendKind.allCases)
    func theLastLogInFollowsAStoredTokenAndAResumeAndTOTPShows(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let alice = try backend.account("alice1", email: "alice@example.com")
        #expect(try summary(.username("alice1"), backend)?.lastLoginAtMs == nil)
        let first = backend.clock.nowMs()
        try backend.value { storage.acting(for: charge(alice.id)).storeToken(hash: token(1), for: alice.id,
                                                                             completion: $0) }
        #expect(try summary(.email("ALICE@example.com"), backend)?.lastLoginAtMs == first)
        backend.clock.advance(byMs: 5_000)
        _ = try resumes(1, backend)
        let seen = try summary(.username("alice1"), backend)
        #expect(seen?.lastLoginAtMs == first + 5_000)
        #expect(seen?.totp == false)
        #expect(try list(nil, backend).items.first?.lastLoginAtMs == first + 5_000)

        try backend.value { storage.acting(for: charge(alice.id)).storePendingTOTP(of: alice.id, sealed: [1, 2, 3],
                completion: $0) }
        #expect(try summary(.username("alice1"), backend)?.totp == false)
        #expect(try backend.value { storage.acting(for: charge(alice.id)).confirmTOTP(of: alice.id, step: 7,
                completion: $0) })
        #expect(try summary(.username("alice1"), backend)?.totp == true)
        #expect(try summary(.username("nobody"), backend) == nil)
    }

    @Test(arguments: BackendKind.allCases)
    func aResetClearsOnlyTheKeysItNames(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let keys = ["account:alice1", "uid:1000", "account:bobby1"]
        try backend.value { storage.acting(for: peerCharge).recordFailure(keys: keys, completion: $0) }
        try backend.value { storage.acting(for: peerCharge).recordFailure(keys: keys, completion: $0) }
        try backend.value { storage.acting(for: peerCharge).resetFailures(keys: ["account:alice1"], completion: $0) }
        let failures = try backend.value {
            storage.acting(for: peerCharge).recentFailures(keys: keys, windowMs: 60_000, completion: $0)
        }
        #expect(failures.times["account:alice1"] ?? [] == [])
        #expect(failures.times["uid:1000"]?.count == 2)
        #expect(failures.times["account:bobby1"]?.count == 2)
    }
}
