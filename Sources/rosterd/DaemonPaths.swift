import RosterRuntime
import Glibc
import RosterProtocol

/// Where the socket and database live, chosen as protocol.md §The daemon orders it: option, environment, config,
/// systemd's directories, then the per-user or system default.
public struct DaemonPaths: Equatable, Sendable {
    public let socket: String
    public let database: String

    /// Why no path could be chosen (for a non-root user without XDG directories, say).
    public struct Unresolvable: Error, CustomStringConvertible {
        public let description: String
    }

    public static func resolve(socketOption: String?, databaseOption: String?,
                               configSocket: String? = nil, configDatabase: String? = nil,
                               environment: [String: String], isRoot: Bool) throws(Unresolvable) -> DaemonPaths {
        func nonEmpty(_ key: String) -> String? {
            guard let value = environment[key], !value.isEmpty else { return nil }
            return value
        }
        let socket: String
        if let chosen = socketOption ?? nonEmpty("ROSTER_SOCKET") ?? configSocket {
            socket = chosen
        } else if let runtime = nonEmpty("RUNTIME_DIRECTORY")?.split(separator: ":").first {
            socket = "\(runtime)/roster.sock"
        } else if let fallback = SocketLocation.defaultPath(environment: environment, isRoot: isRoot) {
            socket = fallback
        } else {
            throw Unresolvable(description: "XDG_RUNTIME_DIR is not set; pass --socket PATH or set ROSTER_SOCKET")
        }
        let database: String
        if let chosen = databaseOption ?? nonEmpty("ROSTER_DATABASE") ?? configDatabase {
            database = chosen
        } else if let state = nonEmpty("STATE_DIRECTORY")?.split(separator: ":").first {
            database = "\(state)/roster.db"
        } else if isRoot {
            database = "/var/lib/roster/roster.db"
        } else if let state = nonEmpty("XDG_STATE_HOME") {
            database = "\(state)/roster/roster.db"
        } else if let home = nonEmpty("HOME") {
            database = "\(home)/.local/state/roster/roster.db"
        } else {
            throw Unresolvable(description: "neither XDG_STATE_HOME nor HOME is set; pass --database PATH")
        }
        return DaemonPaths(socket: socket, database: database)
    }

    /// The key file: `[Secrets] KeyFile=`, else `roster.key` in the database's directory — for PostgreSQL, where the
    /// SQLite database would be, so every daemon sharing a database must be given the same file.
    public static func keyFile(configured: String?, database: String) -> String {
        if let configured { return configured }
        guard let slash = database.lastIndex(of: "/") else { return "roster.key" }
        return "\(database[..<slash])/roster.key"
    }

    /// Creates the missing parents of `path` with `mode`; existing directories are left as they are.
    public static func createParentDirectories(of path: String, mode: mode_t) throws(SystemError) {
        var components = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        components.removeLast()
        var current = path.hasPrefix("/") ? "" : "."
        for component in components where !component.isEmpty {
            current += "/" + component
            if mkdir(current, mode) != 0 && errno != EEXIST {
                throw SystemError(errno: errno, call: "mkdir \(current)")
            }
        }
    }
}

extension DaemonPaths {
    /// Thousands of clients need thousands of descriptors: lift the soft limit to the hard one, as systemd's daemons do.
    public static func raiseDescriptorLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}
