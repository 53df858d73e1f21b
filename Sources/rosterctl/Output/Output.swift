import Glibc
import RosterProtocol

/// One line on stderr, written whole.
func writeError(_ text: String) {
    let line = Array((text + "\n").utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

/// JSON for people (`--json=pretty`) or for pipes (compact, one line).
func render(_ value: JSONValue, pretty: Bool) -> String {
    pretty ? JSONWriter.prettyString(value) : value.description
}

/// Prints and flushes at once, so a pipe reader (or a test) sees each line as it happens.
func printLine(_ text: String) {
    print(text)
    fflush(nil)
}

/// Writes text to `fd` as is, unbuffered (prompts and terminal frames must not wait for a newline).
func writeRaw(_ fd: Int32, _ text: String) {
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress.map { $0 + offset }, $0.count - offset) }
        if written < 0 && errno == EINTR { continue }
        guard written > 0 else { return }
        offset += written
    }
}
