import Foundation
import Glibc
import RosterRuntime

/// A throwaway PostgreSQL server for tests: Debian's `postgresql` run as the `postgres` user (`runuser`), in a
/// fresh temporary directory, listening only on a Unix socket there, with `fsync=off` (tests only). Each test
/// takes a database of its own (`createDatabase`), so tests run side by side on one cluster.
public final class PostgresTestCluster: @unchecked Sendable {
    /// Why a cluster could not be set up; the tool's own output included.
    public struct SetupError: Error, CustomStringConvertible {
        public let description: String
    }

    /// The cluster every test of this process shares, started on first use and stopped when the process exits.
    public static var shared: PostgresTestCluster {
        get throws {
            try sharedCluster.withLock { cluster in
                if let cluster { return cluster }
                removeOrphans()
                let started = try PostgresTestCluster()
                cluster = started
                atexit { try? PostgresTestCluster.sharedCluster.withLock { $0?.destroy() } }
                return started
            }
        }
    }

    // A pthread lock, not Synchronization's Mutex: ThreadSanitizer cannot see the Mutex's futex, and read the
    // first-use check of two suites starting at once as a race.
    private static let sharedCluster = Locked<PostgresTestCluster?>(nil)

    /// The directory holding the data, the socket and the server's log.
    public let directory: String
    /// Where the server's Unix socket lives: a conninfo's `host=`.
    public var socketDirectory: String { directory + "/sock" }
    public var logPath: String { directory + "/pg.log" }
    private let binaries: String
    private let nextDatabase = Locked<Int>(0)

    /// Starts a new cluster of its own (about a second): for tests that stop and restart the server.
    public init() throws {
        binaries = try Self.findBinaries()
        let template = FileManager.default.temporaryDirectory.appendingPathComponent("roster-pg-XXXXXX").path
        var bytes = Array(template.utf8CString)
        guard let made = mkdtemp(&bytes) else { throw SetupError(description: "mkdtemp failed: errno \(errno)") }
        directory = String(cString: made)
        _ = chmod(directory, 0o755)
        // Whose cluster this is: a test process killed before its exit handler ran leaves it for the next to stop.
        try "\(getpid())\n".write(toFile: directory + "/owner.pid", atomically: false, encoding: .utf8)
        try Self.run(["/usr/bin/install", "-d", "-o", "postgres", "-m", "700", directory + "/data", directory + "/sock"])
        try Self.run(["/usr/bin/install", "-o", "postgres", "/dev/null", directory + "/pg.log"])
        try Self.run(["/usr/sbin/runuser", "-u", "postgres", "--", binaries + "/initdb", "-D", directory + "/data",
                      "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C.UTF-8"])
        try start()
    }

    /// A conninfo for the `postgres` superuser and `database`.
    public func conninfo(database: String = "postgres") -> String {
        "host=\(socketDirectory) user=postgres dbname=\(database)"
    }

    /// A new, empty database, and its conninfo.
    public func createDatabase() throws -> String {
        let name = "t\(getpid())_\(nextDatabase.withLock { $0 += 1; return $0 })"
        try psql("CREATE DATABASE \(name) TEMPLATE template0")
        return conninfo(database: name)
    }

    /// Runs one SQL command with `psql` (as the superuser), failing on any error.
    @discardableResult
    public func psql(_ sql: String, database: String = "postgres") throws -> String {
        try Self.run(["/usr/bin/psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", conninfo(database: database),
                      "-c", sql])
    }

    /// (Re)starts the server on the same data, waiting until it accepts connections.
    public func start() throws {
        try Self.run(["/usr/sbin/runuser", "-u", "postgres", "--", binaries + "/pg_ctl", "-D", directory + "/data",
                      "-l", logPath, "-w", "-o",
                      "-c listen_addresses='' -c unix_socket_directories=\(socketDirectory) -c fsync=off -c max_connections=200",
                      "start"])
    }

    /// `pg_ctl stop -m immediate`: as a crash of the server, every connection dropped at once.
    public func stopImmediately() {
        _ = try? Self.run(["/usr/sbin/runuser", "-u", "postgres", "--", binaries + "/pg_ctl", "-D", directory + "/data",
                           "-m", "immediate", "-w", "stop"])
    }

    /// Stops the server and removes its directory.
    public func destroy() {
        stopImmediately()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Stops and removes the clusters of test processes that are gone (killed, so their exit handler never ran).
    private static func removeOrphans() {
        let temporary = FileManager.default.temporaryDirectory.path
        let names = (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? []
        for name in names where name.hasPrefix("roster-pg-") {
            let directory = temporary + "/" + name
            guard let text = try? String(contentsOfFile: directory + "/owner.pid", encoding: .utf8),
                  let owner = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)),
                  kill(owner, 0) != 0 && errno == ESRCH,
                  let binaries = try? findBinaries() else { continue }
            _ = try? run(["/usr/sbin/runuser", "-u", "postgres", "--", binaries + "/pg_ctl", "-D", directory + "/data",
                          "-m", "immediate", "-w", "stop"])
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    private static func findBinaries() throws -> String {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        guard let newest = versions.compactMap(Int.init).max() else {
            throw SetupError(description: "no PostgreSQL server under \(root): apt-get install postgresql")
        }
        return "\(root)/\(newest)/bin"
    }

    /// Runs a tool to its end with posix_spawn and waitpid. Its output goes through a file, and Foundation's
    /// `Process` is not used: the server that `pg_ctl start` leaves running inherits whatever a parent watches a
    /// child by, and `waitUntilExit` then waits for the server too.
    @discardableResult
    private static func run(_ arguments: [String]) throws -> String {
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("roster-pg-\(UUID().uuidString).out").path
        defer { unlink(outputPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, arguments[0], &actions, nil, &argv, environ)
        guard spawned == 0 else { throw SetupError(description: "cannot start \(arguments[0]): errno \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        let exited = status & 0x7f == 0
        let code = (status >> 8) & 0xff
        guard exited && code == 0 else {
            throw SetupError(description: "\(arguments.joined(separator: " ")) failed (status \(status)): \(text)")
        }
        return text
    }
}
