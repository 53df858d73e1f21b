import CSystemd
import Glibc
import RosterCore
import RosterRuntime

/// Native journald entries: MESSAGE, PRIORITY, SYSLOG_IDENTIFIER and our ROSTER_* fields, so that
/// `journalctl ROSTER_USER=alice1` finds a user's story. Callers never pass a password or a message body.
public struct JournalSink: LogSink {
    public init() {}

    public func write(level: LogLevel, message: String, fields: [(String, String)]) {
        var entries = ["MESSAGE=\(message)", "PRIORITY=\(level.rawValue)", "SYSLOG_IDENTIFIER=rosterd"]
        for (key, value) in fields { entries.append("\(key.uppercased())=\(value)") }
        let buffers = entries.map { Array($0.utf8) }
        let pointers: [UnsafeMutablePointer<UInt8>] = buffers.map { bytes in
            let pointer = UnsafeMutablePointer<UInt8>.allocate(capacity: max(bytes.count, 1))
            pointer.initialize(from: bytes, count: bytes.count)
            return pointer
        }
        defer { pointers.forEach { $0.deallocate() } }
        var vectors = zip(pointers, buffers).map { iovec(iov_base: UnsafeMutableRawPointer($0.0), iov_len: $0.1.count) }
        _ = sd_journal_sendv(&vectors, Int32(vectors.count))
    }
}

/// How the daemon should log, from how it was started (systemd.exec(5) `$JOURNAL_STREAM`).
public enum LogDestination {
    /// journald when stderr is the very stream journald gave us; `<N>` prefixes under another service manager
    /// pipe; plain lines at a terminal or in a test.
    public static func sink(environment: [String: String]) -> any LogSink {
        if let stream = environment["JOURNAL_STREAM"], stderrIs(stream) { return JournalSink() }
        let underSystemd = environment["INVOCATION_ID"] != nil || environment["NOTIFY_SOCKET"] != nil
        return StderrSink(priorityPrefix: underSystemd && isatty(2) == 0)
    }

    /// `JOURNAL_STREAM` is `DEVICE:INODE` of the journal stream; a redirected stderr no longer matches it.
    private static func stderrIs(_ stream: String) -> Bool {
        let parts = stream.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(2, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }
}
