import RosterCore
import RosterRuntime

/// Log lines, kept for a test to read (a failure the test provokes is not noise on stderr).
public final class KeptLog: LogSink {
    private let lines = Locked<[String]>([])

    public init() {}

    public var messages: [String] { lines.withLock { $0 } }

    public func write(level: LogLevel, message: String, fields: [(String, String)]) {
        lines.withLock { $0.append(message) }
    }
}
