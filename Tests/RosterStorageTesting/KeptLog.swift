import RosterCore
import RosterRuntime

/// Log lines, kept for a test to read (a failure the test provokes is not noise on stderr).
public final class KeptLog: LogSink {
    /// One line as the journal would get it: its message and its native fields.
    public struct Line: Sendable {
        public let message: String
        public let fields: [String: String]
    }

    private let lines = Locked<[Line]>([])

    public init() {}

    public var messages: [String] { lines.withLock { $0.map(\.message) } }

    /// Every line with its fields (a field named twice keeps its last value).
    public var kept: [Line] { lines.withLock { $0 } }

    public func write(level: LogLevel, message: String, fields: [(String, String)]) {
        let line = Line(message: message, fields: Dictionary(fields, uniquingKeysWith: { $1 }))
        lines.withLock { $0.append(line) }
    }
}
