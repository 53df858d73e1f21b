import RosterCore
import Testing
@testable import RosterRuntime
@testable import RosterServer

/// Issue 12 §1: a path, a client's name or any text from outside never reaches a log line raw.
@Suite struct LogTextTests {
    @Test func everyControlCharacterIsWrittenAsAnEscape() {
        #expect(LogText.escaped("a\nb\tc\rd") == "a\\nb\\tc\\rd")
        #expect(LogText.escaped("bell\u{07} esc\u{1B}[2J del\u{7F} nul\u{00}") == "bell\\u{7} esc\\u{1b}[2J del\\u{7f} nul\\u{0}")
        // C1 controls, the Unicode line breaks and the bidi overrides that reorder what a terminal shows.
        #expect(LogText.escaped("x\u{85}y\u{9B}z") == "x\\u{85}y\\u{9b}z")
        #expect(LogText.escaped("a\u{2028}b\u{2029}c") == "a\\u{2028}b\\u{2029}c")
        #expect(LogText.escaped("user\u{202E}gpj.exe\u{2066}") == "user\\u{202e}gpj.exe\\u{2066}")
        // The marks and the Arabic letter mark reorder text as well; the journal escapes what a table escapes.
        #expect(LogText.escaped("a\u{200E}b\u{200F}c\u{61C}d") == "a\\u{200e}b\\u{200f}c\\u{61c}d")
        #expect(LogText.escaped("x\u{202A}\u{2069}") == FreeText.escaped("x\u{202A}\u{2069}"))
        // A backslash is doubled, so that text cannot pass itself off as an escape.
        #expect(LogText.escaped("C:\\n") == "C:\\\\n")
    }

    @Test func ordinaryTextIsUnchanged() {
        for text in ["/var/lib/roster/roster.db", "张三 Nguyễn Văn Ánh 김민준", "emoji 👩‍👩‍👧 and — dashes", ""] {
            #expect(LogText.escaped(text) == text)
        }
    }

    @Test func theLoggerEscapesMessagesAndFieldValues() {
        let sink = RecordingSink()
        let logger = Logger(level: .debug, sink: sink)
        logger.notice("backup to /tmp/x\nrosterd: forged refused", [("ROSTER_PATH", "a\nb")])
        #expect(sink.lines.withLock { $0 } == ["backup to /tmp/x\\nrosterd: forged refused|ROSTER_PATH=a\\nb"])
    }
}

private final class RecordingSink: LogSink, @unchecked Sendable {
    let lines = Locked<[String]>([])

    func write(level: LogLevel, message: String, fields: [(String, String)]) {
        lines.withLock { $0.append(([message] + fields.map { "\($0.0)=\($0.1)" }).joined(separator: "|")) }
    }
}
