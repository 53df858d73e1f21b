import RosterCore
import RosterRuntime
import RosterStorage
import RosterStorageTesting
import Testing

/// The fake's own test hooks: answers held until released, and calls made to fail. (Its storage behaviour is
/// the contract suite's, which it runs like every backend.)
@Suite("InMemoryStorage's test hooks")
struct InMemoryStorageTests {
    @Test func heldAnswersGoOutOldestFirstWhenReleasedAndDoTheirWorkThen() {
        let storage = InMemoryStorage(clock: ManualWallClock(), answering: .onRelease)
        var answers: [String] = []
        storage.acting(for: peerCharge).isUsernameTaken("alice1") { answers.append("check \((try? $0.get()) ?? false)") }
        storage.acting(for: peerCharge).createAccount(NewAccount(username: "alice1", display: "alice1", email: nil, passwordHash: placeholderHash)) { answers.append("create \((try? $0.get().username) ?? "failed")") }
        storage.acting(for: peerCharge).isUsernameTaken("alice1") { answers.append("check \((try? $0.get()) ?? false)") }
        #expect(answers == [])
        #expect(storage.pending == [.isUsernameTaken, .createAccount, .isUsernameTaken])
        #expect(storage.releaseNext())
        #expect(answers == ["check false"])
        #expect(storage.releaseAll() == 2)
        #expect(answers == ["check false", "create alice1", "check true"])
        #expect(!storage.releaseNext())
        #expect(storage.calls == [.isUsernameTaken, .createAccount, .isUsernameTaken])
    }

    @Test func aLateAnswerCanBeReleasedAfterANewerOne() {
        let storage = InMemoryStorage(answering: .onRelease)
        var answers: [String] = []
        for name in ["old", "new"] {
            storage.acting(for: peerCharge).isEmailTaken(name) { _ in answers.append(name) }
        }
        #expect(storage.release(at: 1))
        #expect(!storage.release(at: 1))
        #expect(storage.releaseNext())
        #expect(answers == ["new", "old"])
    }

    @Test func answersToCallsMadeByReleasedCompletionsStayHeld() {
        let storage = InMemoryStorage(answering: .onRelease)
        var answered = 0
        storage.acting(for: peerCharge).isEmailTaken("a@b.c") { _ in
            answered += 1
            storage.acting(for: peerCharge).isEmailTaken("a@b.c") { _ in answered += 1 }
        }
        #expect(storage.releaseAll() == 1)
        #expect(answered == 1)
        #expect(storage.pending == [.isEmailTaken])
    }

    @Test func aChosenFailureAnswersWhereItIsSetAndWritesNothing() {
        let storage = InMemoryStorage()
        var results: [Result<Account, StorageFailure>] = []
        let new = NewAccount(username: "bob001", display: "bob001", email: nil, passwordHash: placeholderHash)
        storage.failures[.createAccount] = .full
        storage.acting(for: peerCharge).createAccount(new) { results.append($0) }
        var taken: Result<Bool, StorageFailure>?
        storage.acting(for: peerCharge).isUsernameTaken("bob001") { taken = $0 }
        #expect(taken == .success(false))
        storage.failures = [:]
        storage.failure = .unavailable(retryAfterMs: 50)
        storage.acting(for: peerCharge).createAccount(new) { results.append($0) }
        storage.acting(for: peerCharge).isUsernameTaken("bob001") { taken = $0 }
        #expect(taken == .failure(.unavailable(retryAfterMs: 50)))
        storage.failure = nil
        storage.acting(for: peerCharge).createAccount(new) { results.append($0) }
        #expect(results.map { $0.map(\.username) } == [.failure(.full), .failure(.unavailable(retryAfterMs: 50)), .success("bob001")])
    }

    @Test func aFailureIsDecidedWhenTheCallIsMade() {
        let storage = InMemoryStorage(answering: .onRelease)
        var results: [Result<Bool, StorageFailure>] = []
        storage.failure = .full
        storage.acting(for: peerCharge).isEmailTaken("a@b.c") { results.append($0) }
        storage.failure = nil
        storage.acting(for: peerCharge).isEmailTaken("a@b.c") { results.append($0) }
        storage.releaseAll()
        #expect(results == [.failure(.full), .success(false)])
    }

    @Test func aSecondBackupWhileOneIsOutIsBusy() {
        let storage = InMemoryStorage(answering: .onRelease)
        var results: [Result<BackupSummary, BackupFailure>] = []
        storage.acting(for: peerCharge).backup(to: "/backups/a.db") { results.append($0) }
        storage.acting(for: peerCharge).backup(to: "/backups/b.db") { results.append($0) }
        #expect(results == [.failure(.storage(.busy(retryAfterMs: 1_000)))])
        storage.releaseAll()
        storage.acting(for: peerCharge).backup(to: "/backups/a.db") { results.append($0) }
        storage.releaseAll()
        #expect(results == [.failure(.storage(.busy(retryAfterMs: 1_000))),
                            .success(BackupSummary(path: "/backups/a.db", pages: 0, bytes: 0)),
                            .failure(.refused(.targetExists))])
        #expect(storage.backups == ["/backups/a.db"])
    }
}
