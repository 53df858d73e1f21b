import RosterCore
import RosterRuntime
import RosterStorage
import Testing

/// Full and stopped storage answer with failures, once and on the loop, and never crash; a full backend keeps
/// every write it acknowledged and none it refused, and still answers reads.
@Suite("Storage contract: full and unavailable storage")
struct FailureContractTests {
    @Test(arguments: BackendKind.allCases)
    func aFullBackendRefusesWritesAsFullAndKeepsWhatItAcknowledged(_ kind: BackendKind) throws {
        let backend = try kind.make(rowLimit: 24)
        let storage = backend.storage
        let owner = try backend.account("full01").id
        var acknowledged: [Int64] = []
        var refusal: StorageFailure?
        for index in 0..<400 {
            let answer = try backend.answer {
                storage.acting(for: charge(owner)).addContact(ContactDraft(name: "Filler \(index)", note: String(repeating: "x", count: 3_900)),
                                                              for: owner, completion: $0)
            }
            switch answer {
            case .success(let added): acknowledged.append(added.contact.id)
            case .failure(let failure): refusal = failure
            }
            if refusal != nil { break }
        }
        #expect(refusal == .full)
        #expect(!acknowledged.isEmpty)
        let index = try backend.value {
            storage.acting(for: charge(owner)).loadSearchIndex(of: owner, build: { $0.map(\.id) }, completion: $0)
        }
        #expect(index == acknowledged)
        // Further writes are refused alike, an import writes none of its rows, and reads still answer.
        let csv = "name\n" + (0..<50).map { "Imported \($0)\n" }.joined()
        #expect(try backend.answer { storage.acting(for: charge(owner)).importContacts(csv, format: .csv, for: owner,
                completion: $0) }
                .map(\.added.count) == .failure(.full))
        #expect(try backend.value { storage.acting(for: charge(owner)).loadSearchIndex(of: owner, build: { $0.count },
                completion: $0) } == acknowledged.count)
        #expect(try backend.value { storage.acting(for: peerCharge).isUsernameTaken("full01", completion: $0) })
        #expect(try backend.answer { storage.acting(for: peerCharge).createAccount(NewAccount(username: String(repeating: "n", count: 5_000),
                                                                                              display: "n", email: String(repeating: "e", count: 20_000),
                                                                                              passwordHash: placeholderHash),
                                                                                   completion: $0) }.map(\.id) == .failure(.full))
    }

    @Test(arguments: BackendKind.allCases)
    func aStoppedBackendAnswersEveryCallUnavailable(_ kind: BackendKind) throws {
        let backend = try kind.make()
        let storage = backend.storage
        let user = try backend.account("gone01").id
        storage.stop()
        func expectUnavailable<T>(_ result: Result<T, StorageFailure>, _ call: String,
                                  sourceLocation: SourceLocation = #_sourceLocation) {
            guard case .failure(.unavailable) = result else {
                Issue.record("\(call) answered \(result)", sourceLocation: sourceLocation)
                return
            }
        }
        let c = charge(user)
        expectUnavailable(try backend.answer { storage.acting(for: c).isUsernameTaken("gone01",
                completion: $0) }, "isUsernameTaken")
        expectUnavailable(try backend.answer { storage.acting(for: c).isEmailTaken("a@b.c",
                completion: $0) }, "isEmailTaken")
        expectUnavailable(try backend.answer { storage.acting(for: c).accountExists(.username("gone01"),
                completion: $0) },
                          "accountExists")
        expectUnavailable(try backend.answer { storage.acting(for: c).credential(for: .username("gone01"),
                completion: $0) },
                          "credential")
        expectUnavailable(try backend.answer {
            storage.acting(for: c).createAccount(NewAccount(username: "new001", display: "new001", email: nil, passwordHash: placeholderHash),
                                                 completion: $0)
        }, "createAccount")
        expectUnavailable(try backend.answer { storage.acting(for: c).replacePasswordHash(placeholderHash, of: user,
                completion: $0) },
                          "replacePasswordHash")
        let hash = [UInt8](repeating: 9, count: 32)
        expectUnavailable(try backend.answer { storage.acting(for: c).storeToken(hash: hash, for: user,
                completion: $0) }, "storeToken")
        expectUnavailable(try backend.answer { storage.acting(for: c).resumeToken(hash: hash, idleLimitMs: 1_000,
                completion: $0) },
                          "resumeToken")
        expectUnavailable(try backend.answer { storage.acting(for: c).revokeToken(hash: hash,
                completion: $0) }, "revokeToken")
        expectUnavailable(try backend.answer { storage.acting(for: c).recentFailures(keys: ["k"], windowMs: 1_000,
                completion: $0) },
                          "recentFailures")
        expectUnavailable(try backend.answer { storage.acting(for: c).recordFailure(keys: ["k"],
                completion: $0) }, "recordFailure")
        expectUnavailable(try backend.answer { storage.acting(for: c).loadSearchIndex(of: user, build: { $0.count },
                completion: $0) },
                          "loadSearchIndex")
        expectUnavailable(try backend.answer {
            storage.acting(for: c).readContacts([1], of: user, cancelled: Locked(false), encode: { $0.count },
                                                completion: $0)
        }, "readContacts")
        expectUnavailable(try backend.answer { storage.acting(for: c).addContact(ContactDraft(name: "A"), for: user,
                completion: $0) },
                          "addContact")
        expectUnavailable(try backend.answer {
            storage.acting(for: c).updateContact(1, of: user,
                                                 with: ContactPatch(name: "B", phone: nil, email: nil, note: nil),
                                                 completion: $0)
        }, "updateContact")
        expectUnavailable(try backend.answer { storage.acting(for: c).removeContact(1, of: user,
                completion: $0) }, "removeContact")
        expectUnavailable(try backend.answer { storage.acting(for: c).importContacts("name\nA\n", format: .csv,
                for: user, completion: $0) }, "importContacts")
        expectUnavailable(try backend.answer {
            storage.acting(for: c).exportContacts(of: user, after: 0, into: CollectingSink(limit: 1),
                                                  cancelled: Locked(false), completion: $0)
        }, "exportContacts")
        var backedUp: [Result<BackupSummary, BackupFailure>] = []
        storage.acting(for: c).backup(to: "/nonexistent-dir/roster-backup.db",
                                      completion: backend.completion { backedUp.append($0) })
        try backend.run(until: { !backedUp.isEmpty })
        guard case .failure(.storage(.unavailable))? = backedUp.first else { Issue.record("backup: \(backedUp)"); return }
        // Maintenance after the stop does nothing and does not crash.
        storage.pruneExpired(failureWindowMs: 1, tokenIdleMs: 1)
        storage.warmUp()
        storage.apply(ServerSettings())
    }
}
