import CLinux
import CRosterFloor
import Glibc
import RosterHostIO
import RosterProtocol

/// A server under test in its own process, pinned to its own core: the C floor or rosterd.
final class ServerProcess {
    enum Kind: String { case floor, rosterd }

    let kind: Kind
    let pid: pid_t
    let socketPath: String
    /// From spawn to ready (rosterd: its READY=1 on NOTIFY_SOCKET; floor: the first connect), in µs.
    private(set) var startupMicroseconds: Double = 0
    /// rosterd: from READY=1 until every username was in memory (`admin.stats` `username_directory`), in µs.
    private(set) var warmUpMicroseconds: Double = 0
    private var stopped = false

    private init(kind: Kind, pid: pid_t, socketPath: String) {
        self.kind = kind
        self.pid = pid
        self.socketPath = socketPath
    }

    deinit { stop() }

    /// The floor runs in a child of this binary, so it shares nothing with the client but the socket.
    static func floor(socketPath: String, cpu: Int?, workDir: String) throws(BenchError) -> ServerProcess {
        unlink(socketPath)
        let started = Clock.now()
        let pid = try spawn([selfExecutable(), "--serve-floor", socketPath], environment: ["PATH=/usr/bin:/bin"],
                            stderrPath: workDir + "/floor.stderr")
        let server = ServerProcess(kind: .floor, pid: pid, socketPath: socketPath)
        if let cpu { _ = roster_pin_to_cpu(pid, Int32(cpu)) }
        try server.waitUntilConnectable()
        server.startupMicroseconds = Clock.microseconds(since: started)
        return server
    }

    /// rosterd on `socketPath`, started the way systemd would (NOTIFY_SOCKET), so start-up ends at READY=1.
    static func rosterd(binary: String, socketPath: String, databaseArguments: [String], configPath: String,
                        cpu: Int?, workDir: String, name: String = "rosterd") throws(BenchError) -> ServerProcess {
        unlink(socketPath)
        let notify = try NotifyListener(path: workDir + "/notify.sock")
        let environment = ["PATH=/usr/bin:/bin", "HOME=\(workDir)", "NOTIFY_SOCKET=\(notify.path)"]
        let started = Clock.now()
        let pid = try spawn([binary, "--socket", socketPath] + databaseArguments + ["--config", configPath],
                            environment: environment, stderrPath: workDir + "/\(name).stderr")
        let server = ServerProcess(kind: .rosterd, pid: pid, socketPath: socketPath)
        if let cpu { _ = roster_pin_to_cpu(pid, Int32(cpu)) }
        guard notify.waitForReady(timeoutMs: 60_000, while: { server.isRunning }) else {
            server.stop()
            let said = (try? readText(workDir + "/\(name).stderr")).map { ": " + $0.suffix(600) } ?? ""
            throw BenchError("rosterd did not report READY=1; see \(workDir)/\(name).stderr\(said)")
        }
        server.startupMicroseconds = Clock.microseconds(since: started)
        // Threads made before the pin inherited the old mask; pin every one now.
        if let cpu { server.pinAllThreads(cpu: cpu) }
        let ready = Clock.now()
        try server.waitUntilWarm()
        server.warmUpMicroseconds = Clock.microseconds(since: ready)
        return server
    }

    /// Scenarios measure the steady state: rosterd fills its username directory after READY, and until then
    /// the database answers checks (correct, slower). The wait is reported on its own.
    private func waitUntilWarm() throws(BenchError) {
        let fd = try UnixSocket.connect(socketPath)
        defer { close(fd) }
        for _ in 0..<60_000 {
            let stats = try RoundTrips.call(fd: fd, Array("{\"id\":1,\"method\":\"admin.stats\"}\n".utf8))
            if stats.contains("\"username_directory\":\"ready\"") { return }
            if stats.contains("\"username_directory\":\"failed\"") {
                throw BenchError("rosterd could not fill its username directory: \(stats)")
            }
            usleep(2_000)
        }
        throw BenchError("rosterd's username directory was not ready after two minutes")
    }

    private func waitUntilConnectable() throws(BenchError) {
        for _ in 0..<2_000 {
            if let fd = try? UnixSocket.connect(socketPath) {
                close(fd)
                return
            }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                stopped = true
                throw BenchError("the \(kind.rawValue) server exited at start")
            }
            usleep(2_000)
        }
        throw BenchError("the \(kind.rawValue) server did not listen")
    }

    func pinAllThreads(cpu: Int) {
        guard let directory = opendir("/proc/\(pid)/task") else { return }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if let tid = Int32(name) { _ = roster_pin_to_cpu(tid, Int32(cpu)) }
        }
    }

    /// Resident set size from /proc, in bytes.
    func residentBytes() -> Int {
        guard let status = try? readText("/proc/\(pid)/status") else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let digits = line.split(separator: " ").compactMap { Int($0) }
            return (digits.first ?? 0) * 1_024
        }
        return 0
    }

    /// CPU time the process has used, all threads, user and system, in seconds (from /proc).
    func cpuSeconds() -> Double {
        guard let stat = try? readText("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return 0 }
        // After the command's closing bracket: state is field 3, utime and stime are fields 14 and 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// False once the process exited (it is reaped then).
    var isRunning: Bool {
        guard !stopped else { return false }
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == pid else { return true }
        stopped = true
        return false
    }

    /// SIGTERM, then SIGKILL if it lingers; always reaps the child.
    func stop() {
        guard !stopped else { return }
        stopped = true
        kill(pid, SIGTERM)
        var status: Int32 = 0
        for _ in 0..<1_000 {
            if waitpid(pid, &status, WNOHANG) == pid { return }
            usleep(5_000)
        }
        kill(pid, SIGKILL)
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }
}

/// Stands in for systemd's `$NOTIFY_SOCKET`.
struct NotifyListener {
    let path: String
    private let fd: Int32

    init(path: String) throws(BenchError) {
        self.path = path
        unlink(path)
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard var address = UnixSocketAddress.make(path) else { throw BenchError("socket path too long: \(path)") }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard fd >= 0, bound == 0 else { throw BenchError("cannot bind the notify socket \(path)") }
    }

    /// Whether READY=1 came within `timeoutMs`; gives up as soon as `alive` says the daemon is gone.
    func waitForReady(timeoutMs: Int32, while alive: () -> Bool) -> Bool {
        defer {
            close(fd)
            unlink(path)
        }
        var buffer = [UInt8](repeating: 0, count: 4_096)
        var waited: Int32 = 0
        while true {
            var watch = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&watch, 1, 100)
            if ready == 0 {
                waited += 100
                guard waited < timeoutMs, alive() else { return false }
                continue
            }
            guard ready == 1 else { return false }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return false }
            if String(decoding: buffer[..<count], as: UTF8.self).contains("READY=1") { return true }
        }
    }
}

/// posix_spawn with stdin and stdout on /dev/null and stderr to a file.
func spawn(_ argv: [String], environment: [String], stderrPath: String) throws(BenchError) -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    let cArgs = argv.map { strdup($0) } + [nil]
    let cEnv = environment.map { strdup($0) } + [nil]
    defer { (cArgs + cEnv).forEach { free($0) } }
    var pid: pid_t = 0
    let result = posix_spawn(&pid, argv[0], &actions, nil, cArgs, cEnv)
    guard result == 0 else { throw BenchError("posix_spawn \(argv[0]): \(String(cString: strerror(result)))") }
    return pid
}

/// Runs `argv` with `spawn` and waits for it; its exit status (or the signal's number plus 128). Its stderr
/// goes to `output`.
func runToCompletion(_ argv: [String], output: String = "/dev/null") throws(BenchError) -> Int32 {
    let pid = try spawn(argv, environment: ["PATH=/usr/bin:/bin"], stderrPath: output)
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let signal = status & 0x7f
    return signal == 0 ? (status >> 8) & 0xff : 128 + signal
}

func selfExecutable() -> String {
    var buffer = [CChar](repeating: 0, count: 4_096)
    let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    return count > 0 ? String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) : "roster-bench"
}

func readText(_ path: String) throws(BenchError) -> String {
    guard let text = TextFile.read(path) else { throw BenchError("cannot read \(path)") }
    return text
}

func writeText(_ path: String, _ text: String) throws(BenchError) {
    guard TextFile.write(path, text) else { throw BenchError("cannot write \(path)") }
}

func fileSize(_ path: String) -> Int {
    var info = stat()
    return stat(path, &info) == 0 ? Int(info.st_size) : 0
}
