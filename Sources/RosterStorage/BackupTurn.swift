/// One backup at a time, on every backend: each holds a worker or a connection and reads the whole database
/// for seconds, so a second one asked meanwhile is told to come back. Owned by the loop thread.
public struct BackupTurn: Sendable {
    /// The hint a refused backup carries.
    public static let retryAfterMs: Int64 = 1_000

    private var running = false

    public init() {}

    /// Takes the turn, or answers the refusal when a backup runs already.
    public mutating func take() -> BackupFailure? {
        guard !running else { return .storage(.busy(retryAfterMs: Self.retryAfterMs)) }
        running = true
        return nil
    }

    /// The backup that held the turn has answered (or never started).
    public mutating func release() {
        running = false
    }
}
