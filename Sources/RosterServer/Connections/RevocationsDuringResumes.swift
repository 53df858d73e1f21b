import RosterRuntime
/// Revocations that resumes still under way must hear of. A resume reads its token on a worker and answers on
/// the loop; a revocation of the same token that completes in between has already ended every session bound to
/// it, so the resume, answering after it, must not bind a new one.
///
/// Only revocations made while some resume runs are kept, and only until every resume that started before
/// them has answered, so the list is as long as the resumes in flight allow.
struct RevocationsDuringResumes {
    private var nextSequence: UInt64 = 0
    /// Where each running resume started in the sequence of revocations, oldest first.
    private var running: [UInt64] = []
    private var revoked: [(hash: [UInt8], sequence: UInt64)] = []

    /// Call as a resume starts; pass what it returns to `resumeEnded`.
    mutating func resumeStarted() -> UInt64 {
        running.append(nextSequence)
        return nextSequence
    }

    /// Whether the token `hash` (nil when the resume failed anyway) was revoked since the resume began.
    mutating func resumeEnded(startedAt start: UInt64, hash: [UInt8]?) -> Bool {
        if let index = running.firstIndex(of: start) { running.remove(at: index) }
        let wasRevoked = hash.map { hash in revoked.contains { $0.sequence >= start && $0.hash == hash } } ?? false
        let oldest = running.first ?? nextSequence
        revoked.removeAll { $0.sequence < oldest }
        return wasRevoked
    }

    mutating func tokenRevoked(_ hash: [UInt8]) {
        guard !running.isEmpty else { return }
        revoked.append((hash, nextSequence))
        nextSequence += 1
    }

    /// Revocations kept for resumes under way (for tests and the budget's sake).
    var keptCount: Int { revoked.count }
}
