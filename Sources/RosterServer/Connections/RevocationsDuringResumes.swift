import RosterRuntime
/// Revocations that resumes still under way must hear of. A resume reads its token on a worker and answers on
/// the loop; a revocation of the same token that completes in between has already ended every session bound to
/// it, so the resume, answering after it, must not bind a new one.
///
/// Every session of an account ended (a lock, a password change or a deletion on another daemon) counts as a
/// revocation of each of its tokens.
///
/// Only revocations made while some resume runs are kept, and only until every resume that started before
/// them has answered, so the list is as long as the resumes in flight allow.
struct RevocationsDuringResumes {
    private var nextSequence: UInt64 = 0
    /// Where each running resume started in the sequence of revocations, oldest first.
    private var running: [UInt64] = []
    /// What a revocation ended: one token, or every session of an account.
    private enum Ended: Equatable {
        case token([UInt8])
        case account(Int64)
    }

    private var revoked: [(what: Ended, sequence: UInt64)] = []

    /// Call as a resume starts; pass what it returns to `resumeEnded`.
    mutating func resumeStarted() -> UInt64 {
        running.append(nextSequence)
        return nextSequence
    }

    /// Whether the token `hash` of `account` (nil when the resume failed anyway) was revoked since the resume
    /// began.
    mutating func resumeEnded(startedAt start: UInt64, hash: [UInt8]?, account: Int64? = nil) -> Bool {
        if let index = running.firstIndex(of: start) { running.remove(at: index) }
        let ended = [hash.map(Ended.token), account.map(Ended.account)].compactMap { $0 }
        let wasRevoked = hash != nil && revoked.contains { $0.sequence >= start && ended.contains($0.what) }
        let oldest = running.first ?? nextSequence
        revoked.removeAll { $0.sequence < oldest }
        return wasRevoked
    }

    mutating func tokenRevoked(_ hash: [UInt8]) { record(.token(hash)) }

    mutating func sessionsEnded(of account: Int64) { record(.account(account)) }

    private mutating func record(_ what: Ended) {
        guard !running.isEmpty else { return }
        revoked.append((what, nextSequence))
        nextSequence += 1
    }

    /// Revocations kept for resumes under way (for tests and the budget's sake).
    var keptCount: Int { revoked.count }
}
