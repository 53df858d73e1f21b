import RosterCore
import RosterRuntime
import RosterStorage
import Testing

/// Accounts, as every backend must keep them: names and emails unique without regard to case (as callers give
/// them, canonical), a clash named by its field, one winner of a race, and nothing answered before it is kept.
@Suite("Storage contract: accounts")
struct AccountContractTests {
    @Test(arguments: BackendKind.allCases)
    func anAccountIsFoundByItsNameOrEmailWithoutRegardToCase(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let alice = try backend.account("alice1", email: "Alice@Example.com")
        #expect(alice.username == "alice1")
        #expect(alice.email == "Alice@Example.com")
        #expect(alice.createdAtMs == backend.clock.nowMs())

        for name in ["alice1", "ALICE1", "Alice1"] {
            #expect(try backend.value { storage.acting(for: peerCharge).isUsernameTaken(name,
                    completion: $0) }, "\(name)")
            #expect(try backend.value { storage.acting(for: peerCharge).accountExists(.username(name),
                    completion: $0) })
        }
        for email in ["alice@example.com", "ALICE@example.COM"] {
            #expect(try backend.value { storage.acting(for: peerCharge).isEmailTaken(email,
                    completion: $0) }, "\(email)")
            #expect(try backend.value { storage.acting(for: peerCharge).accountExists(.email(email), completion: $0) })
            let credential = try backend.value { storage.acting(for: peerCharge).credential(for: .email(email),
                    completion: $0) }
            #expect(credential?.account == alice)
            #expect(credential?.passwordHash == placeholderHash)
        }
        #expect(try !backend.value { storage.acting(for: peerCharge).isUsernameTaken("alice2", completion: $0) })
        #expect(try !backend.value { storage.acting(for: peerCharge).isEmailTaken("bob@example.com", completion: $0) })
        #expect(try !backend.value { storage.acting(for: peerCharge).accountExists(.username("nobody"),
                completion: $0) })
        #expect(try !backend.value { storage.acting(for: peerCharge).accountExists(.email("alice1"), completion: $0) })
        #expect(try backend.value { storage.acting(for: peerCharge).credential(for: .username("nobody"),
                                                                               completion: $0) } == nil)
        let byName = try backend.value { storage.acting(for: peerCharge).credential(for: .username("ALICE1"),
                completion: $0) }
        #expect(byName?.account == alice)
    }

    /// What a backend knows of usernames from memory (`knownUsernameTaken`) never contradicts what it answers,
    /// before or after it warmed up, and follows registrations answered since.
    @Test(arguments: BackendKind.allCases)
    func aUsernameKnownFromMemoryAgreesWithTheAnswer(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        _ = try backend.account("alice1", email: nil)
        func agrees(_ name: String) throws {
            let taken = try backend.value { storage.acting(for: peerCharge).isUsernameTaken(name, completion: $0) }
            if let known = storage.knownUsernameTaken(name) { #expect(known == taken, "\(name)") }
        }
        for name in ["alice1", "ALICE1", "bob123"] { try agrees(name) }
        storage.warmUp()
        try backend.settle()
        _ = try backend.account("bob123", email: nil)
        for name in ["alice1", "ALICE1", "bob123", "Bob123", "carol1"] { try agrees(name) }
        // A backend that keeps a directory answers from it once it is warm, also through `any Storage`.
        guard kind != .memory else { return }
        try backend.run(until: { storage.knownUsernameTaken("alice1") != nil })
        #expect(storage.knownUsernameTaken("ALICE1") == true)
        #expect(storage.knownUsernameTaken("carol1") == false)
    }

    @Test(arguments: BackendKind.allCases)
    func aClashNamesItsFieldAndTheUsernameFirst(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        _ = try backend.account("bobby1", email: "bob@example.com")
        func create(_ username: String, _ email: String?) throws -> Result<Account, StorageFailure> {
            try backend.answer {
                storage.acting(for: peerCharge).createAccount(NewAccount(username: username, display: username, email: email,
                                                                         passwordHash: placeholderHash), completion: $0)
            }
        }
        #expect(try create("BOBBY1", nil) == .failure(.conflict(.username)))
        #expect(try create("robert", "BOB@example.com") == .failure(.conflict(.email)))
        // Both clash: the username, which the register form checks first.
        #expect(try create("Bobby1", "bob@example.com") == .failure(.conflict(.username)))
        // Accounts without an email never clash on it.
        #expect(try create("carol1", nil).get().email == nil)
        #expect(try create("carol2", nil).get().email == nil)
        let statistics = try backend.value { storage.statistics(completion: $0) }
        #expect(statistics.accounts == 3)
    }

    @Test(arguments: BackendKind.allCases)
    func ofTwoRegistrationsOfOneNameIssuedTogetherExactlyOneWins(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        var answers: [Result<Account, StorageFailure>] = []
        for (display, email) in [("Dave01", "dave@example.com"), ("DAVE01", "other@example.com")] {
            storage.acting(for: peerCharge).createAccount(NewAccount(username: display.lowercased(), display: display, email: email,
                                                                     passwordHash: placeholderHash),
                                                          completion: backend.completion { answers.append($0) })
        }
        try backend.run(until: { answers.count == 2 })
        let winners = answers.compactMap { try? $0.get() }
        #expect(winners.count == 1)
        #expect(answers.contains(.failure(.conflict(.username))))
        let found = try backend.value { storage.acting(for: peerCharge).credential(for: .username("dave01"),
                completion: $0) }
        #expect(found?.account == winners.first)
    }

    @Test(arguments: BackendKind.allCases)
    func anAnsweredAccountIsThereForTheNextInstance(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let erin = try backend.account("erin01", email: "erin@example.com")
        let hash = "$argon2id$v=19$m=19456,t=2,p=1$bmV3c2FsdA$bmV3aGFzaA"
        try backend.value { backend.storage.acting(for: peerCharge).replacePasswordHash(hash, of: erin.id,
                completion: $0) }
        let reopened = try backend.reopened()
        let found = try backend.value { reopened.acting(for: peerCharge).credential(for: .email("ERIN@example.com"),
                completion: $0) }
        #expect(found?.account == erin)
        #expect(found?.passwordHash == hash)
        #expect(try backend.value { reopened.acting(for: peerCharge).isUsernameTaken("erin01", completion: $0) })
    }

    @Test(arguments: BackendKind.allCases)
    func whatIsNotAnArgon2idHashIsNeverStored(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let created = try backend.answer {
            storage.acting(for: peerCharge).createAccount(NewAccount(username: "henry1", display: "henry1", email: nil, passwordHash: "hunter2"),
                                                          completion: $0)
        }
        #expect(created == .failure(.other))
        #expect(try !backend.value { storage.acting(for: peerCharge).isUsernameTaken("henry1", completion: $0) })
        let ivy = try backend.account("ivy001")
        #expect(try backend.answer { storage.acting(for: peerCharge).replacePasswordHash("x", of: ivy.id,
                completion: $0) }
                == .failure(.other))
        #expect(try backend.answer { storage.acting(for: peerCharge).replacePasswordHash(placeholderHash, of: 9_999,
                completion: $0) }
                == .failure(.other))
        let kept = try backend.value { storage.acting(for: peerCharge).credential(for: .username("ivy001"),
                completion: $0) }
        #expect(kept?.passwordHash == placeholderHash)
    }
}

extension Result where Success == Void, Failure == StorageFailure {
    /// Void is not Equatable; a test compares outcomes.
    static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.success, .success): true
        case (.failure(let a), .failure(let b)): a == b
        default: false
        }
    }
}
