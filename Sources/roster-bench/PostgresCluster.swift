import Glibc

/// A throwaway PostgreSQL server for one benchmark run, set up as the tests' cluster is
/// (`Tests/RosterPostgresTesting`): Debian's binaries, a fresh temporary directory, a Unix socket there and no
/// TCP, run as the `postgres` user through `runuser` when the benchmark runs as root. Unlike the tests' it keeps
/// `fsync` on, so that its commits cost what SQLite's `synchronous=FULL` ones do.
final class PostgresCluster {
    let directory: String
    var socketDirectory: String { directory + "/sock" }
    var logPath: String { directory + "/pg.log" }
    let version: String
    private let binaries: String
    private let asPostgres: Bool
    private var running = false

    init() throws(BenchError) {
        let root = "/usr/lib/postgresql"
        guard let newest = Self.directories(in: root).compactMap(Int.init).max() else {
            throw BenchError("no PostgreSQL server under \(root): apt-get install postgresql, or pass --postgresql CONNINFO")
        }
        version = String(newest)
        binaries = "\(root)/\(newest)/bin"
        asPostgres = geteuid() == 0
        var template = Array("/tmp/roster-bench-pg-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ $0.baseAddress.flatMap { mkdtemp($0) } }) else {
            throw BenchError("mkdtemp failed")
        }
        directory = String(cString: made)
        // The postgres user must reach the data and the socket inside a directory root made.
        _ = chmod(directory, 0o755)
        do throws(BenchError) {
            if asPostgres {
                try run(["/usr/bin/install", "-d", "-o", "postgres", "-m", "700", directory + "/data", directory + "/sock"])
                try run(["/usr/bin/install", "-o", "postgres", "/dev/null", logPath])
            } else {
                try run(["/usr/bin/install", "-d", "-m", "700", directory + "/data", directory + "/sock"])
            }
            try run(tool("initdb") + ["-D", directory + "/data", "-U", "postgres", "--auth=trust", "-E", "UTF8",
                                      "--locale=C.UTF-8"])
            try run(tool("pg_ctl") + ["-D", directory + "/data", "-l", logPath, "-w", "-o",
                                      "-c listen_addresses='' -c unix_socket_directories=\(socketDirectory) -c max_connections=200",
                                      "start"])
            running = true
        } catch {
            destroy()
            throw error
        }
    }

    /// A conninfo for the superuser on `database`.
    func conninfo(database: String) -> String {
        "host=\(BenchConninfo.quoted(socketDirectory)) user=postgres dbname=\(BenchConninfo.quoted(database))"
    }

    /// Stops the server (`-m fast`: connections are closed, nothing is left behind) and removes its directory.
    func destroy() {
        if running {
            running = false
            _ = try? run(tool("pg_ctl") + ["-D", directory + "/data", "-m", "fast", "-w", "stop"])
        }
        _ = try? runToCompletion(["/bin/rm", "-rf", directory])
    }

    private func tool(_ name: String) -> [String] {
        asPostgres ? ["/usr/sbin/runuser", "-u", "postgres", "--", binaries + "/" + name] : [binaries + "/" + name]
    }

    /// Runs a tool to its end; its output goes to a file (`pg_ctl start` leaves a server behind that would hold
    /// a pipe open), which is quoted when the tool fails.
    private func run(_ argv: [String]) throws(BenchError) {
        let output = directory + "/tool.out"
        let status = try runToCompletion(argv, output: output)
        guard status == 0 else {
            let text = (try? readText(output)) ?? ""
            throw BenchError("\(argv.joined(separator: " ")) failed (\(status)): \(text)")
        }
    }

    private static func directories(in path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            names.append(withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) })
        }
        return names
    }
}
