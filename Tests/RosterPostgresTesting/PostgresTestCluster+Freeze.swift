import Foundation
import Glibc

extension PostgresTestCluster {
    /// The server's processes: the postmaster (the first line of `postmaster.pid`) and every child it forked
    /// (backends, checkpointer, writers), read from /proc.
    public func processes() -> [pid_t] {
        guard let text = try? String(contentsOfFile: directory + "/data/postmaster.pid", encoding: .utf8),
              let first = text.split(separator: "\n").first, let postmaster = pid_t(first) else { return [] }
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        let children = entries.compactMap(pid_t.init).filter { pid in
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let end = stat.lastIndex(of: ")") else { return false }
            // After the command's closing parenthesis: state, then the parent's pid.
            let fields = stat[stat.index(after: end)...].split(separator: " ")
            return fields.count > 1 && pid_t(fields[1]) == postmaster
        }
        return [postmaster] + children
    }

    /// SIGSTOP to the postmaster first (so that it forks nothing more), then to each child: the server stops
    /// answering with every connection still open, as a frozen host or a stalled disk makes it. Returns the
    /// processes stopped, for `thaw`.
    @discardableResult
    public func freeze() -> [pid_t] {
        let stopped = processes()
        for pid in stopped { kill(pid, SIGSTOP) }
        return stopped
    }

    /// SIGCONT to `processes` (every process of the server when nil).
    public func thaw(_ processes: [pid_t]? = nil) {
        for pid in processes ?? self.processes() { kill(pid, SIGCONT) }
    }
}
