import Glibc
import RosterRuntime

/// A directory under /tmp removed with its files when the value goes, for stand-in programs and what they record.
final class ScratchDirectory {
    let path: String

    init() throws {
        var template = Array("/tmp/roster-sendmail-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer -> String? in
            mkdtemp(buffer.baseAddress!).map { String(cString: $0) }
        }
        guard let made else { throw SystemError(errno: errno, call: "mkdtemp") }
        path = made
    }

    deinit {
        guard let directory = opendir(path) else { return }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name != "." && name != ".." { unlink(path + "/" + name) }
        }
        closedir(directory)
        rmdir(path)
    }

    func file(_ name: String) -> String { path + "/" + name }

    /// Writes an executable script `name` holding `body` after a `#!/bin/sh` line; its path.
    func script(_ name: String, _ body: String, mode: mode_t = 0o755) throws -> String {
        let path = file(name)
        try write(path, "#!/bin/sh\n" + body + "\n", mode: mode)
        return path
    }

    func write(_ path: String, _ text: String, mode: mode_t = 0o644) throws {
        try write(path, Array(text.utf8), mode: mode)
    }

    func write(_ path: String, _ bytes: [UInt8], mode: mode_t = 0o644) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw SystemError(errno: errno, call: "open \(path)") }
        defer { close(fd) }
        fchmod(fd, mode)
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            guard count > 0 else { throw SystemError(errno: errno, call: "write \(path)") }
            offset += count
        }
    }

    /// The file's bytes, or nil when it does not exist.
    func read(_ name: String) -> [UInt8]? {
        let fd = open(file(name), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            bytes += chunk[..<count]
        }
        return bytes
    }

    func text(_ name: String) -> String? { read(name).map { String(decoding: $0, as: UTF8.self) } }

    func lines(_ name: String) -> [String]? {
        text(name).map { $0.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).dropLast() }
            .map(Array.init)
    }
}

/// What this process holds open: each descriptor's target as the kernel names it (`pipe:[123]`,
/// `anon_inode:[pidfd]`), and the pid a pidfd stands for (from its fdinfo).
enum OpenDescriptors {
    static func targets() -> [Int32: String] {
        var result: [Int32: String] = [:]
        guard let directory = opendir("/proc/self/fd") else { return result }
        let own = dirfd(directory)
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            guard let fd = Int32(name), fd != own else { continue }
            var buffer = [CChar](repeating: 0, count: 256)
            let count = readlink("/proc/self/fd/\(name)", &buffer, buffer.count - 1)
            guard count > 0 else { continue }
            result[fd] = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        closedir(directory)
        return result
    }

    /// Descriptors of this process that are pidfds of `pid`.
    static func pidfds(of pid: pid_t) -> [Int32] {
        targets().filter { $0.value == "anon_inode:[pidfd]" }.keys.filter { fd in
            guard let info = TextFileRead.contents("/proc/self/fdinfo/\(fd)") else { return false }
            return info.split(separator: "\n").contains("Pid:\t\(pid)")
        }
    }
}

/// Whole small files, for /proc.
enum TextFileRead {
    static func contents(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Whether `pid` is gone or a zombie (dead, waiting for whoever its parent is now).
func processIsDead(_ pid: pid_t) -> Bool {
    guard let stat = TextFileRead.contents("/proc/\(pid)/stat") else { return true }
    // The state follows the command's closing parenthesis.
    guard let close = stat.lastIndex(of: ")") else { return true }
    let state = stat[stat.index(after: close)...].drop(while: { $0 == " " }).first
    return state == "Z" || state == "X"
}

/// Whether our own child `pid` has been reaped already: waiting for it finds no such child.
func alreadyReaped(_ pid: pid_t) -> Bool {
    var status: Int32 = 0
    return waitpid(pid, &status, WNOHANG) == -1 && errno == ECHILD
}
