import RosterCore
import RosterRuntime
import RosterStorage
import Testing

/// A contacts write carries the session that asked for it (`SessionGrant`), and every backend checks it in the
/// write's own transaction: once the session's token is revoked, its account locked, or the daemon ended the
/// session, the write answers `.revoked` and the book is unchanged. The loop's own flag is left unset here, so
/// what is tested is the backend's check (what catches a revocation made by another daemon).
@Suite("Storage contract: writes of a revoked session")
struct SessionGrantContractTests {
    private func token(_ byte: UInt8) -> [UInt8] { [UInt8](repeating: byte, count: 32) }

    /// Each of the four writes for `session`, as `user`, on a book holding `existing`.
    private func everyWrite(_ backend: Backend, _ user: AccountID, _ session: SessionGrant,
                            existing: Int64) throws -> [Result<String, StorageFailure>] {
        let storage = backend.storage
        let patch = ContactPatch(name: "Changed", phone: nil, email: nil, note: nil)
        return [
            try backend.answer { done in
                storage.acting(for: charge(user)).addContact(ContactDraft(name: "New One"), for: user,
                                                             session: session) {
                    done($0.map { $0.contact.name })
                }
            },
            try backend.answer { done in
                storage.acting(for: charge(user)).updateContact(existing, of: user, session: session, with: patch) {
                    done($0.map { "\($0)" })
                }
            },
            try backend.answer { done in
                storage.acting(for: charge(user)).removeContact(existing, of: user,
                                                                session: session) { done($0.map { "\($0)" }) }
            },
            try backend.answer { done in
                storage.acting(for: charge(user)).importContacts("name\r\nImported One\r\nImported Two\r\n",
                                                                 format: .csv, for: user,
                                                                 session: session) { done($0.map { "\($0.added.count)" }) }
            },
        ]
    }

    private func book(_ backend: Backend, _ user: AccountID) throws -> [String] {
        try backend.value { done in
            backend.storage.acting(for: charge(user)).loadSearchIndex(of: user, build: { $0.map(\.id) },
                                                                      completion: done)
        }.map(String.init)
    }

    @Test(arguments: BackendKind.allCases)
    func aRevokedTokensWritesAnswerRevokedAndWriteNothing(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let user = try backend.account("grant1").id
        try backend.value { storage.acting(for: charge(user)).storeToken(hash: token(1), for: user, completion: $0) }
        let session = SessionGrant(tokenHash: token(1))
        let kept = try backend.value {
            storage.acting(for: charge(user)).addContact(ContactDraft(name: "Kept"), for: user, session: session,
                                                         completion: $0)
        }
        let before = try book(backend, user)
        #expect(try backend.value { storage.acting(for: .daemon).revokeToken(hash: token(1), completion: $0) })

        let answers = try everyWrite(backend, user, session, existing: kept.contact.id)
        #expect(answers.allSatisfy { $0 == .failure(.revoked) }, "\(answers)")
        #expect(StorageFailure.revoked.rosterError == .unauthenticated)
        #expect(try book(backend, user) == before)
    }

    @Test(arguments: BackendKind.allCases)
    func aLockedAccountsWritesAnswerRevokedAndAnEndedSessionsToo(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let user = try backend.account("grant2").id
        try backend.value { storage.acting(for: charge(user)).storeToken(hash: token(2), for: user, completion: $0) }
        let session = SessionGrant(tokenHash: token(2))
        let kept = try backend.value {
            storage.acting(for: charge(user)).addContact(ContactDraft(name: "Kept"), for: user, session: session,
                                                         completion: $0)
        }
        #expect(try backend.value { storage.acting(for: .daemon).lockAccount(user, reason: nil, completion: $0) })
        let locked = try everyWrite(backend, user, session, existing: kept.contact.id)
        #expect(locked.allSatisfy { $0 == .failure(.revoked) }, "\(locked)")

        // A session without a token stops only when the daemon ends it.
        let tokenless = SessionGrant(tokenHash: nil)
        tokenless.end()
        let ended = try everyWrite(backend, user, tokenless, existing: kept.contact.id)
        #expect(ended.allSatisfy { $0 == .failure(.revoked) }, "\(ended)")
        #expect(try book(backend, user) == [String(kept.contact.id)])
    }

    @Test(arguments: BackendKind.allCases)
    func aLiveSessionsWritesGoThrough(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let user = try backend.account("grant3").id
        try backend.value { storage.acting(for: charge(user)).storeToken(hash: token(3), for: user, completion: $0) }
        let session = SessionGrant(tokenHash: token(3))
        let kept = try backend.value {
            storage.acting(for: charge(user)).addContact(ContactDraft(name: "Kept"), for: user, session: session,
                                                         completion: $0)
        }
        let answers = try everyWrite(backend, user, session, existing: kept.contact.id)
        #expect(answers.allSatisfy { (try? $0.get()) != nil }, "\(answers)")
        #expect([0, 2, 3].map { try? answers[$0].get() } == ["New One", "true", "2"], "\(answers)")
        #expect(try book(backend, user).count == 3, "the new one and the two imported; the kept one removed")
    }
}
