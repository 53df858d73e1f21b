import Glibc
import RosterProtocol
import Testing

/// Runs `rosterctl` against a test daemon with a private runtime directory, as a user's shell would.
struct Rosterctl {
    let daemon: TestDaemon
    let runtime: String

    init(_ daemon: TestDaemon) throws {
        self.daemon = daemon
        runtime = daemon.directory.path + "/xdg-runtime"
        mkdir(runtime, 0o700)
    }

    var sessionPath: String { runtime + "/roster/session" }

    var environment: [String] { ["PATH=/usr/bin:/bin", "XDG_RUNTIME_DIR=\(runtime)"] }

    /// Runs to completion with `input` on stdin; returns the status and both outputs.
    func run(_ arguments: [String], input: String = "", environment extra: [String] = [], socket: String? = nil)
        throws -> (status: Int32, stdout: String, stderr: String) {
        let directory = daemon.directory.path
        try writeFile(directory + "/rosterctl.in", input)
        let argv = [builtBinary("rosterctl"), "--socket", socket ?? daemon.socketPath] + arguments
        let pid = try spawn(argv, environment: environment + extra, stdinPath: directory + "/rosterctl.in",
                                     stdoutPath: directory + "/rosterctl.out", stderrPath: directory + "/rosterctl.err")
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return (decode(status), try readFile(directory + "/rosterctl.out"), try readFile(directory + "/rosterctl.err"))
    }

    /// Registers and logs in through the script path, so a test starts from a kept session.
    func registerAndLogIn(_ username: String, password: String = "secret1") throws {
        let result = try run(["register", "--username", username, "--password-stdin"], input: password + "\n")
        guard result.status == 0 else { throw HarnessError(description: "register failed: \(result.stderr)") }
    }
}

/// Polls `condition` every 20 ms until it holds or `timeoutMs` passes; the wait is never the assertion.
func eventually(timeoutMs: Int = 10_000, _ condition: () throws -> Bool) rethrows -> Bool {
    for _ in 0..<(timeoutMs / 20) {
        if try condition() { return true }
        usleep(20_000)
    }
    return try condition()
}

/// The mode bits of a path, or nil if it does not exist.
func fileMode(_ path: String) -> mode_t? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return info.st_mode & 0o7777
}
