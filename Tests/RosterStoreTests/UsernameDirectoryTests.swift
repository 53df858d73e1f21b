import Testing
@testable import RosterStore

@Suite("Username directory")
struct UsernameDirectoryTests {
    @Test func theStoreAnswersUntilTheSnapshotArrives() {
        var directory = UsernameDirectory()
        #expect(directory.phase == .loading)
        #expect(directory.contains("alice") == nil)
        #expect(directory.count == nil)
        directory.fill(with: ["alice", "bob"])
        #expect(directory.phase == .ready)
        #expect(directory.contains("alice") == true)
        #expect(directory.contains("carol") == false)
        #expect(directory.count == 2)
    }

    @Test func aRegistrationAnsweredWhileLoadingCountsWhetherOrNotTheSnapshotSawIt() {
        var directory = UsernameDirectory()
        directory.add("carol")   // committed after the snapshot was read
        directory.add("alice")   // committed before, so the snapshot has it too
        directory.fill(with: ["alice", "bob"])
        #expect(directory.contains("carol") == true)
        #expect(directory.count == 3)
        directory.add("dave")
        #expect(directory.contains("dave") == true)
    }

    @Test func namesCompareAsTheColumnDoes() {
        var directory = UsernameDirectory()
        directory.fill(with: Set(["Zoë", "mixedCASE"].map(UsernameKey.folded)))
        // COLLATE NOCASE folds ASCII letters only.
        #expect(directory.contains("MixedCase") == true)
        #expect(directory.contains("zoë") == true)
        #expect(directory.contains("ZOË") == false)
    }

    @Test func aFailedLoadLeavesEveryCheckToTheStore() {
        var directory = UsernameDirectory()
        directory.add("carol")
        directory.fillFailed()
        #expect(directory.phase == .failed)
        #expect(directory.contains("carol") == nil)
        directory.fill(with: ["alice"])
        #expect(directory.contains("alice") == nil)
    }
}
