import Glibc
import RosterCore

/// Where log lines go; the daemon picks one at start-up (plain stderr, `<N>`-prefixed stderr, or journald).
public protocol LogSink: Sendable {
    func write(level: LogLevel, message: String, fields: [(String, String)])
}

/// Plain lines on stderr, `<N>`-prefixed when systemd reads them so that priorities survive.
public struct StderrSink: LogSink {
    public let priorityPrefix: Bool

    public init(priorityPrefix: Bool) { self.priorityPrefix = priorityPrefix }

    public func write(level: LogLevel, message: String, fields: [(String, String)]) {
        var line = priorityPrefix ? "<\(level.rawValue)>" : ""
        line += message
        for (key, value) in fields { line += " \(key.lowercased())=\(value)" }
        line += "\n"
        writeToStandardError(line)
    }
}

/// A small value-type logger, passed in where needed. Callers never hand it a password or a message body.
public struct Logger: Sendable {
    public var level: LogLevel
    public let sink: any LogSink

    public init(level: LogLevel = .info, sink: any LogSink = StderrSink(priorityPrefix: false)) {
        self.level = level
        self.sink = sink
    }

    /// Every message and field value is escaped (`LogText.escaped`) on its way out: paths, client names and
    /// methods come from outside, and a newline in one must not forge a log line.
    public func log(_ level: LogLevel, _ message: @autoclosure () -> String, _ fields: [(String, String)] = []) {
        guard level <= self.level else { return }
        sink.write(level: level, message: LogText.escaped(message()),
                   fields: fields.map { ($0.0, LogText.escaped($0.1)) })
    }

    public func error(_ message: @autoclosure () -> String, _ fields: [(String, String)] = []) { log(.err, message(), fields) }
    public func warning(_ message: @autoclosure () -> String, _ fields: [(String, String)] = []) { log(.warning, message(), fields) }
    public func notice(_ message: @autoclosure () -> String, _ fields: [(String, String)] = []) { log(.notice, message(), fields) }
    public func info(_ message: @autoclosure () -> String, _ fields: [(String, String)] = []) { log(.info, message(), fields) }
    public func debug(_ message: @autoclosure () -> String, _ fields: [(String, String)] = []) { log(.debug, message(), fields) }
}

/// Text that goes into a log line, made safe to show: control characters can neither end the line nor hide text.
public enum LogText {
    /// `text` with C0 and C1 controls, DEL, the Unicode line separators and the bidi controls written as `\n`,
    /// `\t`, `\r` or `\u{…}`, and a backslash doubled so that an escape cannot be faked by the text itself: the
    /// same escaping as rosterctl's tables (`FreeText.escaped`).
    public static func escaped(_ text: String) -> String {
        FreeText.escaped(text)
    }
}

/// Writes straight to fd 2: `stderr` the global is not concurrency-safe, and a line must not interleave.
public func writeToStandardError(_ text: String) {
    var bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress.map { $0 + offset }, $0.count - offset) }
        if written < 0 && errno == EINTR { continue }
        guard written > 0 else { return }
        offset += written
    }
}
