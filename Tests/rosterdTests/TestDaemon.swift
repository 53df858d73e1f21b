import CLinux
import Glibc
import RosterHostIO
import RosterProtocol
import Testing

/// Errors of the test harness itself, so a failing setup says what went wrong.
struct HarnessError: Error, CustomStringConvertible {
    let description: String
}

/// A private temporary directory, removed with everything in it when dropped.
final class TemporaryDirectory {
    let path: String

    init() throws {
        var template = Array("/tmp/roster-test-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ buffer in buffer.baseAddress.flatMap { mkdtemp($0) } }) else {
            throw HarnessError(description: "mkdtemp failed")
        }
        path = String(cString: made)
    }

    deinit { _ = run(["/bin/rm", "-rf", path]) }
}

/// The real `rosterd` binary built next to this test bundle (or `$ROSTERD`), run on a temporary socket and database.
final class TestDaemon {
    let directory: TemporaryDirectory
    let socketPath: String
    let databasePath: String
    private(set) var pid: pid_t = 0
    private var exited: Int32?
    let stderrPath: String

    static var binary: String {
        if let override = getenv("ROSTERD") { return String(cString: override) }
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        let exe = count > 0 ? String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        let directory = exe.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        return directory + "/rosterd"
    }

    /// Starts rosterd and waits until it accepts connections.
    init(arguments: [String] = [], environment: [String: String] = [:], directory: TemporaryDirectory? = nil,
         config: String? = nil, waitUntilReady: Bool = true) throws {
        self.directory = try directory ?? TemporaryDirectory()
        socketPath = self.directory.path + "/run/roster.sock"
        databasePath = self.directory.path + "/state/roster.db"
        stderrPath = self.directory.path + "/rosterd.stderr"
        if let config { try writeFile(self.directory.path + "/rosterd.conf", config) }
        try start(arguments: arguments, environment: environment)
        if waitUntilReady { try waitForSocket() }
    }

    private func start(arguments: [String], environment: [String: String]) throws {
        var env = ["PATH=/usr/bin:/bin", "HOME=\(directory.path)"]
        for (key, value) in environment { env.append("\(key)=\(value)") }
        let argv = [TestDaemon.binary, "--socket", socketPath, "--database", databasePath,
                    "--config", directory.path + "/rosterd.conf"] + arguments
        if access(directory.path + "/rosterd.conf", F_OK) != 0 { try writeFile(directory.path + "/rosterd.conf", "") }
        pid = try spawn(argv, environment: env, stderrPath: stderrPath)
    }

    func waitForSocket(timeoutMs: Int = 10_000) throws {
        for _ in 0..<(timeoutMs / 10) {
            if let client = try? TestClient(path: socketPath) {
                client.close()
                return
            }
            if let status = poll() { throw HarnessError(description: "rosterd exited with \(status) before listening: \(stderr)") }
            usleep(10_000)
        }
        throw HarnessError(description: "rosterd did not listen within \(timeoutMs) ms: \(stderr)")
    }

    var stderr: String { (try? readFile(stderrPath)) ?? "" }

    /// Whether the daemon logs `text` within a few seconds (it logs after it starts listening, so not at once).
    func waitForLog(_ text: String, timeoutMs: Int = 5_000) -> Bool {
        for _ in 0..<(timeoutMs / 10) {
            if stderr.contains(text) { return true }
            usleep(10_000)
        }
        return false
    }

    func connect() throws -> TestClient { try TestClient(path: socketPath) }

    func signal(_ number: Int32) { kill(pid, number) }

    /// The exit status if it has exited (a signal death reads as 128 + signal), else nil.
    func poll() -> Int32? {
        if let exited { return exited }
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == pid else { return nil }
        exited = decode(status)
        return exited
    }

    /// Waits for the daemon to exit, at most `timeoutMs`; nil if it is still running then.
    func waitForExit(timeoutMs: Int = 10_000) -> Int32? {
        for _ in 0..<(timeoutMs / 5) {
            if let status = poll() { return status }
            usleep(5_000)
        }
        return nil
    }

    func stop() {
        guard poll() == nil else { return }
        kill(pid, SIGKILL)
        _ = waitForExit()
    }

    deinit { stop() }
}

func decode(_ status: Int32) -> Int32 {
    let signal = status & 0x7F
    return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
}

/// posix_spawn with each standard stream from or to a file (/dev/null unless named) and default signal handling.
func spawn(_ argv: [String], environment: [String], stdinPath: String? = nil, stdoutPath: String? = nil,
           stderrPath: String? = nil) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, stdinPath ?? "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, stdoutPath ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_addopen(&actions, 2, stderrPath ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    // The test runner may block signals in its threads; the daemon must start with a clean mask.
    var empty = sigset_t()
    sigemptyset(&empty)
    posix_spawnattr_setsigmask(&attributes, &empty)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    sigaddset(&defaults, SIGPIPE)
    sigaddset(&defaults, SIGINT)
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    let cArgs = argv.map { strdup($0) } + [nil]
    let cEnv = (environment + sanitizerOptions(notIn: environment)).map { strdup($0) } + [nil]
    defer { (cArgs + cEnv).forEach { free($0) } }
    var pid: pid_t = 0
    let result = posix_spawn(&pid, argv[0], &actions, &attributes, cArgs, cEnv)
    guard result == 0 else { throw HarnessError(description: "posix_spawn \(argv[0]): \(String(cString: strerror(result)))") }
    return pid
}

/// `make sanitize` sets these for the whole run; children built with the same sanitizer must see them too.
func sanitizerOptions(notIn environment: [String] = []) -> [String] {
    ["ASAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS", "UBSAN_OPTIONS"].compactMap { name in
        guard !environment.contains(where: { $0.hasPrefix(name + "=") }), let value = getenv(name) else { return nil }
        return "\(name)=\(String(cString: value))"
    }
}

/// Runs a command to completion and returns its exit status.
@discardableResult
func run(_ argv: [String], environment: [String] = ["PATH=/usr/bin:/bin"]) -> Int32 {
    guard let pid = try? spawn(argv, environment: environment) else { return -1 }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    return decode(status)
}

/// Runs a command to completion and returns its exit status with what it printed.
func capture(_ argv: [String], environment: [String] = ["PATH=/usr/bin:/bin"], in directory: TemporaryDirectory) throws
    -> (status: Int32, stdout: String, stderr: String) {
    let out = directory.path + "/captured.out"
    let err = directory.path + "/captured.err"
    let pid = try spawn(argv, environment: environment, stdoutPath: out, stderrPath: err)
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    return (decode(status), try readFile(out), try readFile(err))
}

/// A sibling binary of rosterd in the build directory.
func builtBinary(_ name: String) -> String {
    let daemon = TestDaemon.binary
    return String(daemon.dropLast("rosterd".count)) + name
}

func writeFile(_ path: String, _ text: String) throws {
    guard TextFile.write(path, text) else { throw HarnessError(description: "cannot write \(path)") }
}

func readFile(_ path: String) throws -> String {
    guard let text = TextFile.read(path) else { throw HarnessError(description: "cannot read \(path)") }
    return text
}
