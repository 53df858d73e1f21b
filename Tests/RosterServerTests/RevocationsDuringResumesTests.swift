import Testing
@testable import RosterRuntime
@testable import RosterServer

/// Issue 12 §11: a resume that read its token before a revocation and answers after it must not log in.
@Suite("Revocations during resumes")
struct RevocationsDuringResumesTests {
    private let token: [UInt8] = [1, 2, 3]
    private let other: [UInt8] = [9, 9, 9]

    @Test func aRevocationWhileAResumeRunsRefusesThatResumeOnly() {
        var revocations = RevocationsDuringResumes()
        let first = revocations.resumeStarted()
        revocations.tokenRevoked(token)
        let second = revocations.resumeStarted()
        #expect(revocations.resumeEnded(startedAt: second, hash: token) == false)
        #expect(revocations.resumeEnded(startedAt: first, hash: other) == false)
        #expect(revocations.keptCount == 0)

        let third = revocations.resumeStarted()
        revocations.tokenRevoked(token)
        #expect(revocations.resumeEnded(startedAt: third, hash: token) == true)
    }

    /// An account's sessions ended elsewhere (a lock, a password change) refuse a resume of any of its tokens
    /// that was under way, and no other account's.
    @Test func sessionsEndedWhileAResumeRunsRefuseThatAccountsResumes() {
        var revocations = RevocationsDuringResumes()
        let mine = revocations.resumeStarted()
        let theirs = revocations.resumeStarted()
        revocations.sessionsEnded(of: 7)
        #expect(revocations.resumeEnded(startedAt: theirs, hash: other, account: 8) == false)
        #expect(revocations.resumeEnded(startedAt: mine, hash: token, account: 7) == true)
        let later = revocations.resumeStarted()
        #expect(revocations.resumeEnded(startedAt: later, hash: token, account: 7) == false)
        #expect(revocations.keptCount == 0)
    }

    @Test func revocationsWithNoResumeRunningAreNotKept() {
        var revocations = RevocationsDuringResumes()
        for _ in 0..<1_000 { revocations.tokenRevoked(token) }
        #expect(revocations.keptCount == 0)
        let started = revocations.resumeStarted()
        #expect(revocations.resumeEnded(startedAt: started, hash: token) == false)
    }

    @Test func whatIsKeptEndsWithTheOldestResumeThatNeedsIt() {
        var revocations = RevocationsDuringResumes()
        let oldest = revocations.resumeStarted()
        revocations.tokenRevoked(token)
        let younger = revocations.resumeStarted()
        revocations.tokenRevoked(other)
        #expect(revocations.keptCount == 2)
        #expect(revocations.resumeEnded(startedAt: oldest, hash: nil) == false)
        // The younger resume only needs what came after it started.
        #expect(revocations.keptCount == 1)
        #expect(revocations.resumeEnded(startedAt: younger, hash: other) == true)
        #expect(revocations.keptCount == 0)
    }
}
