import CLinux
import Glibc
import RosterCore

/// How long a child may run and how much of its output is kept.
public struct ChildProcessLimits: Equatable, Sendable {
    /// From the spawn to SIGTERM.
    public var timeout: Duration
    /// From SIGTERM to SIGKILL, for a child that ignores or outlasts the first.
    public var killGrace: Duration
    /// Bytes kept of stdout and of stderr each; the rest is read and dropped, so the child never blocks on a full pipe.
    public var outputBytes: Int

    public init(timeout: Duration, killGrace: Duration = .seconds(2), outputBytes: Int = 4096) {
        self.timeout = timeout
        self.killGrace = killGrace
        self.outputBytes = max(0, outputBytes)
    }
}

/// The first bytes of one output stream, and how many it wrote in all.
public struct CapturedOutput: Equatable, Sendable {
    public private(set) var kept: [UInt8] = []
    public private(set) var total = 0
    public let limit: Int

    public init(limit: Int) { self.limit = limit }

    /// Whether bytes were dropped past `limit`.
    public var truncated: Bool { total > kept.count }

    mutating func take(_ chunk: UnsafeRawBufferPointer) {
        total += chunk.count
        let room = limit - kept.count
        if room > 0 { kept.append(contentsOf: chunk.prefix(room)) }
    }
}

/// How one run of a child went.
public struct ChildProcessRun: Equatable, Sendable {
    /// How the child ended; in every case but `couldNotStart` it was reaped.
    public enum Ending: Equatable, Sendable {
        /// It exited by itself with this status.
        case exited(status: Int32)
        /// A signal it did not ask for ended it.
        case signalled(Int32)
        /// It was still running at the timeout and was killed; `signal` is what ended it (SIGTERM, or SIGKILL
        /// after the grace), or 0 when it exited by itself in the grace.
        case timedOut(signal: Int32)
        /// It never ran: the pipes or the spawn failed (ENOENT, EACCES, ENOEXEC, EMFILE…).
        case couldNotStart(SystemError)
        /// It ended, but something else reaped it (SIGCHLD ignored), so how is unknown.
        case lost
    }

    public var ending: Ending
    public var stdout: CapturedOutput
    public var stderr: CapturedOutput
    /// Bytes of the input the child's stdin took; fewer than given when it closed stdin early.
    public var inputWritten: Int
    /// The child's pid, already reaped (0 when it never started): for the log, and for tests that look for zombies.
    public var pid: pid_t
}

/// One run of a program without a shell: fed `input` on stdin, its output kept up to a bound, ended by the clock if
/// it outlives its timeout. A blocking call, for a worker thread, never the loop.
///
/// How it runs: `posix_spawn` of an absolute path (no shell, no PATH search) in a process group of its own, with
/// exactly the environment given, in `/`, with stdin, stdout and stderr on pipes and every other descriptor closed
/// (whatever lacks close-on-exec in the daemon), every signal at its default disposition and none blocked (the
/// daemon ignores SIGPIPE and its loop blocks SIGTERM, SIGINT and SIGHUP, and a child would inherit both). One poll
/// loop writes the input, reads both outputs (a child that floods stdout before it reads stdin cannot deadlock it)
/// and waits for the end on a pidfd. Past the timeout the group gets SIGTERM, and SIGKILL `killGrace` later. The
/// child is reaped before `run` returns and every descriptor opened here is closed. A child that closes stdin
/// early costs no SIGPIPE: the write sees EPIPE with SIGPIPE blocked in this thread, and the signal it raised is
/// taken back.
public enum ChildProcess {
    /// The whole environment a child gets by default: a fixed PATH and nothing of the daemon's.
    public static let cleanEnvironment = ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"]

    public static func run(path: String, arguments: [String], environment: [String] = cleanEnvironment,
                           input: [UInt8], limits: ChildProcessLimits) -> ChildProcessRun {
        var run = Running(limits: limits)
        defer { run.closeAll() }
        do throws(SystemError) {
            try run.start(path: path, arguments: arguments, environment: environment)
        } catch {
            return run.result(.couldNotStart(error))
        }
        let ending = withSIGPIPEBlocked { run.serve(input: input) }
        return run.result(ending)
    }

    /// Runs `body` with SIGPIPE blocked in this thread, and takes back a SIGPIPE that `body`'s writes raised
    /// (one already pending before is left alone).
    private static func withSIGPIPEBlocked<T>(_ body: () -> T) -> T {
        var pipeOnly = sigset_t()
        sigemptyset(&pipeOnly)
        sigaddset(&pipeOnly, SIGPIPE)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &pipeOnly, &previous)
        var pendingBefore = sigset_t()
        sigpending(&pendingBefore)
        let wasPending = sigismember(&pendingBefore, SIGPIPE) == 1
        let result = body()
        if !wasPending {
            var pendingNow = sigset_t()
            sigpending(&pendingNow)
            if sigismember(&pendingNow, SIGPIPE) == 1 {
                var none = timespec()
                _ = sigtimedwait(&pipeOnly, nil, &none)
            }
        }
        pthread_sigmask(SIG_SETMASK, &previous, nil)
        return result
    }
}

/// One child's descriptors and state while `ChildProcess.run` drives it.
private struct Running {
    let limits: ChildProcessLimits
    var stdinFD: Int32 = -1
    var stdoutFD: Int32 = -1
    var stderrFD: Int32 = -1
    var pidFD: Int32 = -1
    /// Child ends of the pipes, closed once the child has its copies.
    var childEnds: [Int32] = []
    var pid: pid_t = 0
    var stdout: CapturedOutput
    var stderr: CapturedOutput
    var written = 0

    init(limits: ChildProcessLimits) {
        self.limits = limits
        stdout = CapturedOutput(limit: limits.outputBytes)
        stderr = CapturedOutput(limit: limits.outputBytes)
    }

    func result(_ ending: ChildProcessRun.Ending) -> ChildProcessRun {
        ChildProcessRun(ending: ending, stdout: stdout, stderr: stderr, inputWritten: written, pid: pid)
    }

    mutating func closeAll() {
        for index in childEnds.indices { Self.close(&childEnds[index]) }
        Self.close(&stdinFD)
        Self.close(&stdoutFD)
        Self.close(&stderrFD)
        Self.close(&pidFD)
    }

    static func close(_ fd: inout Int32) {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    // MARK: Start

    mutating func start(path: String, arguments: [String], environment: [String]) throws(SystemError) {
        let input = try Self.makePipe()
        childEnds.append(input.read)
        stdinFD = input.write
        let output = try Self.makePipe()
        childEnds.append(output.write)
        stdoutFD = output.read
        let errors = try Self.makePipe()
        childEnds.append(errors.write)
        stderrFD = errors.read

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 onto 0, 1 and 2 clears their close-on-exec flag; the pipes are never 0-2 themselves (`makePipe`).
        posix_spawn_file_actions_adddup2(&actions, input.read, 0)
        posix_spawn_file_actions_adddup2(&actions, output.write, 1)
        posix_spawn_file_actions_adddup2(&actions, errors.write, 2)
        posix_spawn_file_actions_addclosefrom_np(&actions, 3)
        posix_spawn_file_actions_addchdir_np(&actions, "/")

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var everySignal = sigset_t()
        sigfillset(&everySignal)
        posix_spawnattr_setsigdefault(&attributes, &everySignal)
        // Its own group, so that a timeout ends what it started too (a script's children, a queue runner).
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var child: pid_t = 0
        let spawned = posix_spawn(&child, path, &actions, &attributes, argv, envp)
        guard spawned == 0 else { throw SystemError(errno: spawned, call: "posix_spawn \(path)") }
        pid = child
        for index in childEnds.indices { Self.close(&childEnds[index]) }
        for fd in [stdinFD, stdoutFD, stderrFD] { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        // Without a pidfd (Linux before 5.3) the loop below looks with waitpid at most every 50 ms instead.
        pidFD = roster_pidfd_open(child)
    }

    /// A close-on-exec pipe whose ends are above 2, so that dup2 onto stdin, stdout or stderr always copies.
    static func makePipe() throws(SystemError) -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        guard pipe2(&ends, O_CLOEXEC) == 0 else { throw SystemError(errno: errno, call: "pipe2") }
        for index in ends.indices where ends[index] <= 2 {
            let moved = fcntl(ends[index], F_DUPFD_CLOEXEC, 3)
            let code = errno
            Glibc.close(ends[index])
            ends[index] = moved
            guard moved >= 0 else {
                for fd in ends where fd >= 0 { Glibc.close(fd) }
                throw SystemError(errno: code, call: "fcntl(F_DUPFD_CLOEXEC)")
            }
        }
        return (ends[0], ends[1])
    }

    // MARK: Serve

    /// Where a run stands with the clock.
    private enum Phase {
        case running(until: UInt64)
        case terminating(until: UInt64)
        case killed
    }

    mutating func serve(input: [UInt8]) -> ChildProcessRun.Ending {
        let started = Self.monotonicNow()
        var phase = Phase.running(until: started &+ Self.nanoseconds(limits.timeout))
        if input.isEmpty { Self.close(&stdinFD) }
        var status: Int32 = 0
        var lost = false
        while true {
            if let found = reaped() {
                if let found { status = found } else { lost = true }
                break
            }
            let now = Self.monotonicNow()
            switch phase {
            case .running(let deadline) where now >= deadline:
                signalGroup(SIGTERM)
                phase = .terminating(until: now &+ Self.nanoseconds(limits.killGrace))
                continue
            case .terminating(let deadline) where now >= deadline:
                signalGroup(SIGKILL)
                phase = .killed
                continue
            case .running, .terminating, .killed:
                break
            }
            let waitMs: Int32
            switch phase {
            case .running(let deadline), .terminating(let deadline):
                waitMs = Int32(clamping: (deadline - now + 999_999) / 1_000_000)
            case .killed:
                waitMs = -1
            }
            pollOnce(input: input, timeoutMs: pidFD >= 0 ? waitMs : (waitMs < 0 ? 50 : min(waitMs, 50)))
        }
        // What it wrote before it ended is still in the pipes; a descendant that kept them open is not waited for.
        Self.drain(&stdoutFD, into: &stdout)
        Self.drain(&stderrFD, into: &stderr)
        if lost { return .lost }
        let signal = status & 0x7f
        switch phase {
        case .running:
            return signal == 0 ? .exited(status: (status >> 8) & 0xff) : .signalled(signal)
        case .terminating, .killed:
            return .timedOut(signal: signal)
        }
    }

    /// Without blocking: nil while the child runs; once it has ended (and is now reaped) its wait status, or
    /// `.some(nil)` when the kernel reaped it for us (ECHILD: SIGCHLD is ignored).
    private func reaped() -> Int32?? {
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid { return .some(status) }
            if result < 0 && errno == EINTR { continue }
            if result < 0 { return .some(nil) }
            return nil
        }
    }

    private func signalGroup(_ signal: Int32) {
        // The group is the child's own (POSIX_SPAWN_SETPGROUP); if it is gone already, the child alone.
        if kill(-pid, signal) != 0 { kill(pid, signal) }
    }

    private mutating func pollOnce(input: [UInt8], timeoutMs: Int32) {
        var fds: [pollfd] = []
        if stdinFD >= 0 { fds.append(pollfd(fd: stdinFD, events: Int16(POLLOUT), revents: 0)) }
        if stdoutFD >= 0 { fds.append(pollfd(fd: stdoutFD, events: Int16(POLLIN), revents: 0)) }
        if stderrFD >= 0 { fds.append(pollfd(fd: stderrFD, events: Int16(POLLIN), revents: 0)) }
        if pidFD >= 0 { fds.append(pollfd(fd: pidFD, events: Int16(POLLIN), revents: 0)) }
        let ready = poll(&fds, nfds_t(fds.count), timeoutMs)
        guard ready > 0 else { return }
        for entry in fds where entry.revents != 0 {
            if entry.fd == stdinFD {
                writeInput(input)
            } else if entry.fd == stdoutFD {
                Self.readAvailable(&stdoutFD, into: &stdout)
            } else if entry.fd == stderrFD {
                Self.readAvailable(&stderrFD, into: &stderr)
            }
            // The pidfd's readiness is read by `reaped` at the top of the loop.
        }
    }

    /// Writes what the pipe takes now; closes stdin once all is written or the child closed its end (EPIPE).
    private mutating func writeInput(_ input: [UInt8]) {
        while written < input.count {
            let count = input.withUnsafeBytes { bytes in
                Glibc.write(stdinFD, bytes.baseAddress.map { $0 + written }, bytes.count - written)
            }
            if count > 0 {
                written += count
                continue
            }
            if count < 0 && errno == EINTR { continue }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return }
            // EPIPE (the child closed stdin) or anything else: nothing more can go in.
            break
        }
        Self.close(&stdinFD)
    }

    /// Reads what is there now; closes the descriptor at end of file.
    private static func readAvailable(_ fd: inout Int32, into output: inout CapturedOutput) {
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while fd >= 0 {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                buffer.withUnsafeBytes { output.take(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
                continue
            }
            if count < 0 && errno == EINTR { continue }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return }
            close(&fd)
        }
    }

    private static func drain(_ fd: inout Int32, into output: inout CapturedOutput) {
        readAvailable(&fd, into: &output)
        close(&fd)
    }

    static func monotonicNow() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    static func nanoseconds(_ duration: Duration) -> UInt64 {
        UInt64(max(0, duration.nanoseconds))
    }
}
