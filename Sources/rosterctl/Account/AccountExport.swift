import Glibc
import RosterProtocol

/// `rosterctl account export`: `account.export`'s JSON on stdout, or in a new file that only its owner may read.
enum AccountExport {
    static func run(output: String?, _ context: VerbContext) throws -> Int32 {
        let connection = try context.connectLoggedIn()
        connection.answerTimeoutMs = 300_000
        let result = try connection.result("account.export", verb: "account export")
        guard let output else {
            // It is a JSON document either way: pretty for people unless --json asked for one line.
            printLine(render(result, pretty: context.json != .short))
            return 0
        }
        try writeNewFile(output, render(result, pretty: true) + "\n")
        if context.json != nil { context.printJSON(["output": .string(output)]) } else { printLine("exported to \(output)") }
        return 0
    }

    /// Creates `path` (mode 0600: it holds the contacts and the account's details) and writes `text`; an
    /// existing file or a symlink is never replaced or followed.
    static func writeNewFile(_ path: String, _ text: String) throws(CommandFailure) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let reason = errno == EEXIST ? "it exists already; not replacing it" : String(cString: strerror(errno))
            throw CommandFailure(description: "account export: cannot write \(path): \(reason)")
        }
        let bytes = Array(text.utf8)
        var offset = 0
        var failed: Int32 = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress.map { $0 + offset }, $0.count - offset) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else {
                failed = errno
                break
            }
            offset += written
        }
        if failed == 0 && fsync(fd) != 0 { failed = errno }
        if close(fd) != 0 && failed == 0 { failed = errno }
        guard failed == 0 else {
            // A half-written export would pass for a whole one later.
            unlink(path)
            throw CommandFailure(description: "account export: cannot write \(path): \(String(cString: strerror(failed)))")
        }
    }
}
