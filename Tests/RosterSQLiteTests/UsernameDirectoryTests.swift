import RosterStorage
import Testing

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

    @Test func aRefillAnswersFromTheOldNamesUntilTheNewSnapshotThenReplaysWhatCameMeanwhile() {
        var directory = UsernameDirectory()
        directory.fill(with: ["alice", "bob"])
        directory.beginRefill()
        #expect(directory.phase == .ready)
        directory.add("carol")      // noted while the new snapshot is read: answered at once, and kept
        directory.remove("bob")
        #expect(directory.contains("carol") == true)
        #expect(directory.contains("bob") == false)
        // The snapshot was read before both changes, and has a name this directory never heard of.
        directory.fill(with: ["alice", "bob", "dave"])
        #expect(directory.contains("carol") == true)
        #expect(directory.contains("bob") == false)
        #expect(directory.contains("dave") == true)
        #expect(directory.count == 3)
    }

    @Test func aFailedRefillKeepsTheNamesItHadAndAFailedFirstFillCanBeRetried() {
        var directory = UsernameDirectory()
        directory.fill(with: ["alice"])
        directory.beginRefill()
        directory.add("carol")
        directory.fillFailed()
        #expect(directory.phase == .ready)
        #expect(directory.contains("alice") == true)
        #expect(directory.contains("carol") == true)

        var failed = UsernameDirectory()
        failed.fillFailed()
        failed.beginRefill()
        #expect(failed.phase == .loading)
        failed.add("erin")
        failed.fill(with: ["frank"])
        #expect(failed.contains("erin") == true)
        #expect(failed.contains("frank") == true)
    }

    @Test func aRemovalWhileLoadingIsReplayedOverTheSnapshot() {
        var directory = UsernameDirectory()
        directory.remove("alice")   // deleted after the snapshot had read it
        directory.fill(with: ["alice", "bob"])
        #expect(directory.contains("alice") == false)
        #expect(directory.count == 1)
    }
}
