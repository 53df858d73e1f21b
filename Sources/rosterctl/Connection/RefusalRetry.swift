import Glibc
import RosterClient
import RosterProtocol

/// Asking again after a refusal that did nothing: `busy` (a spent queue or output budget) for everything, and
/// `storage_unavailable` (the database is down or failing over) for reads only. A write the daemon answered
/// `storage_unavailable` is not sent again: the connection to the database may have broken after the write
/// reached it, so whether to try again is the person's call, and rosterctl says what happened instead.
struct RefusalRetry: Sendable {
    /// Reads: asking again can neither lose nor repeat anything.
    static let forReads = RefusalRetry(reasons: ["busy", "storage_unavailable"])
    /// Writes: only what was refused before it started.
    static let forWrites = RefusalRetry(reasons: ["busy"])
    /// Attempts after the first; with the doubling floor they cover tens of seconds, a busy daemon's or a
    /// database's restart.
    static let retries = 40

    let reasons: Set<String>

    /// Waits that many milliseconds.
    static func pause(ms: Int64) { usleep(useconds_t(ms * 1_000)) }

    /// `send`'s answer, asked again after each refusal in `reasons`, at most `retries` times; `sleep` waits (a test
    /// records the waits instead).
    func run(sleep: (Int64) -> Void = RefusalRetry.pause(ms:),
             _ send: () throws -> Result<JSONValue, RemoteError>) rethrows -> Result<JSONValue, RemoteError> {
        // The daemon's hint is what it guesses now; a guess that keeps failing doubles, so the retries cover
        // tens of seconds, not only the first hint's worth.
        var floorMs: Int64 = 10
        for _ in 0..<Self.retries {
            let answer = try send()
            guard case .failure(let error) = answer, reasons.contains(error.reason) else { return answer }
            sleep(min(max(error.data["retry_after_ms"]?.int64Value ?? 250, floorMs), 5_000))
            floorMs = min(floorMs * 2, 1_000)
        }
        return try send()
    }
}
