import Glibc
import RosterHostIO
import RosterRuntime

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
            guard let info = TextFile.read("/proc/self/fdinfo/\(fd)") else { return false }
            return info.split(separator: "\n").contains("Pid:\t\(pid)")
        }
    }
}

/// Whether `pid` is gone or a zombie (dead, waiting for whoever its parent is now).
func processIsDead(_ pid: pid_t) -> Bool {
    guard let stat = TextFile.read("/proc/\(pid)/stat") else { return true }
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
