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

extension String {
    func padding(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
