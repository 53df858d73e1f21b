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
    /// `text` with C0 and C1 controls, DEL, the Unicode line separators and the bidi overrides written as `\n`,
    /// `\t`, `\r` or `\u{…}`, and a backslash doubled so that an escape cannot be faked by the text itself.
    public static func escaped(_ text: String) -> String {
        // A byte scan first: almost every line has nothing to escape, and this runs for each one.
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == 0x5C || $0 == 0xC2 || $0 == 0xE2 }) else {
            return text
        }
        var out = ""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count + 8)
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x0A: out += "\\n"
            case 0x09: out += "\\t"
            case 0x0D: out += "\\r"
            case 0x5C: out += "\\\\"
            case 0x00..<0x20, 0x7F...0x9F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069:
                out += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
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
