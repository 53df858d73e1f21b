import Glibc
import RosterCore
import RosterMailTesting
import RosterTestSupport
import Testing
@testable import RosterRuntime

/// The hand-off to the host's sendmail, against stand-in programs the tests write: what the program is given
/// (argv, environment, descriptors, signals, stdin, its own process group, `/`), how each way of ending reads, and that no run leaves a
/// zombie, a descriptor or a pending SIGPIPE behind.
@Suite("Sendmail program")
struct SendmailProgramTests {
    static let sender = "roster@example.org"
    static let recipient = "alice@example.com"
    /// A line holding only `.`, which `-i` keeps in the message, and some UTF-8.
    static let message = Array("Subject: =?UTF-8?B?5L2g5aW9?=\r\n\r\nfirst line\r\n.\r\nlast line, 你好\r\n".utf8)

    /// A stand-in that records what it was given into `directory` and exits 0 once it has read all of stdin.
    static func recorder(in directory: ScratchDirectory) throws -> String {
        try directory.script("record", """
            dir='\(directory.path)'
            printf '%s\\n' "$$" > "$dir/pid"
            printf '%s\\n' "$0" "$@" > "$dir/argv"
            tr '\\000' '\\n' < /proc/$$/environ > "$dir/environ"
            p0=$(readlink /proc/$$/fd/0); p1=$(readlink /proc/$$/fd/1); p2=$(readlink /proc/$$/fd/2)
            printf '%s\\n' "$p0" "$p1" "$p2" > "$dir/pipes"
            cut -d' ' -f5 /proc/$$/stat > "$dir/pgrp"
            pwd -P > "$dir/cwd"
            cat > "$dir/stdin"
            exit 0
            """)
    }

    @Test func aProgramThatExitsZeroHasTheMessageAndOnlyWhatItIsGiven() throws {
        let directory = try ScratchDirectory()
        let program = SendmailProgram(path: try Self.recorder(in: directory))
        let outcome = program.handOff(Self.message, from: Self.sender, to: Self.recipient)

        #expect(outcome == .handedOff)
        #expect(outcome.reason == "handed_off")
        #expect(directory.lines("argv") == [program.path, "-i", "-f", Self.sender, "--", Self.recipient])
        #expect(directory.lines("environ") == ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"])
        #expect(directory.read("stdin") == Self.message)
        #expect(directory.lines("cwd") == ["/"])
        let pid = try #require(directory.lines("pid")?.first.flatMap { pid_t($0) })
        #expect(directory.lines("pgrp") == ["\(pid)"], "a process group of its own")
        #expect(alreadyReaped(pid), "no zombie is left")
        // The pipes the child had on 0, 1 and 2 are all closed on our side, and no pidfd of it is open.
        let pipes = try #require(directory.lines("pipes"))
        #expect(pipes.count == 3 && pipes.allSatisfy { $0.hasPrefix("pipe:[") }, "\(pipes)")
        let open = Set(OpenDescriptors.targets().values)
        #expect(pipes.allSatisfy { !open.contains($0) }, "a pipe of the child's is still open here")
        #expect(OpenDescriptors.pidfds(of: pid).isEmpty)
    }

    /// The daemon's loop thread blocks SIGTERM, SIGINT and SIGHUP, the daemon ignores SIGPIPE, and descriptors
    /// without close-on-exec exist in any process (this test runner has a dozen): a child gets none of them.
    /// Looked at by programs that keep what they are given (a shell would clear its signal mask first).
    @Test func aChildStartsWithNoSignalBlockedOrIgnoredAndOnlyItsThreeDescriptors() throws {
        // Blocked in this thread as the loop's, and one ignored as SIGPIPE is in the daemon: SIGWINCH, ignored by
        // default anyway, so nothing else in this process notices.
        var blocked = sigset_t(), previous = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGHUP)
        sigaddset(&blocked, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        signal(SIGWINCH, SIG_IGN)
        let limits = ChildProcessLimits(timeout: .seconds(30))
        let signals = ChildProcess.run(path: "/bin/grep", arguments: ["-E", "^Sig(Blk|Ign):", "/proc/self/status"],
                                       input: [], limits: limits)
        let descriptors = ChildProcess.run(path: "/bin/ls", arguments: ["-1", "/proc/self/fd"], input: [], limits: limits)
        let environment = ChildProcess.run(path: "/usr/bin/env", arguments: [], input: [], limits: limits)
        signal(SIGWINCH, SIG_DFL)
        pthread_sigmask(SIG_SETMASK, &previous, nil)

        let lines = String(decoding: signals.stdout.kept, as: UTF8.self).split(separator: "\n")
        #expect(lines.first == "SigBlk:\t0000000000000000", "\(lines)")
        // glibc's posix_spawn ignores its two internal signals (32 and 33) in every child; no program uses them.
        let ignored = lines.last.flatMap { UInt64($0.dropFirst("SigIgn:\t".count), radix: 16) }
        #expect(ignored.map { $0 & 0x7fff_ffff } == 0, "\(lines)")
        // ls's own listing: the three it was given, and the directory it reads.
        #expect(String(decoding: descriptors.stdout.kept, as: UTF8.self) == "0\n1\n2\n3\n")
        #expect(String(decoding: environment.stdout.kept, as: UTF8.self) == "PATH=/usr/sbin:/usr/bin:/sbin:/bin\n")
        for run in [signals, descriptors, environment] {
            #expect(run.ending == .exited(status: 0))
            #expect(alreadyReaped(run.pid))
        }
    }

    @Test func exit75IsATemporaryFailureWithWhatTheProgramSaid() throws {
        let directory = try ScratchDirectory()
        let path = try directory.script("tempfail", "cat > /dev/null\necho 'mail queue is full, try later' >&2\nexit 75")
        let outcome = SendmailProgram(path: path).handOff(Self.message, from: Self.sender, to: Self.recipient)
        guard case .failed(let failure) = outcome else {
            Issue.record("handed off: \(outcome)")
            return
        }
        #expect(failure.reason == .tempfail && failure.kind == .temporary && failure.retryable)
        #expect(outcome.reason == "tempfail")
        #expect(failure.detail == "exit status 75 (EX_TEMPFAIL)")
        #expect(failure.excerpt == "mail queue is full, try later")
    }

    /// Escapes, carriage returns, tabs and line breaks never reach the log; a long complaint is cut.
    @Test func exit1IsATemporaryFailureWithAShortCleanExcerpt() throws {
        let directory = try ScratchDirectory()
        let path = try directory.script("fail", """
            cat > /dev/null
            printf 'sendmail: \\033[31mbad\\033[0m address\\r\\n\\tsecond line\\n' >&2
            printf '%0500d\\n' 0 >&2
            exit 1
            """)
        let outcome = SendmailProgram(path: path).handOff(Self.message, from: Self.sender, to: Self.recipient)
        guard case .failed(let failure) = outcome else {
            Issue.record("handed off: \(outcome)")
            return
        }
        #expect(failure.reason == .exitStatus && failure.kind == .temporary && failure.retryable)
        #expect(failure.detail == "exit status 1")
        #expect(failure.excerpt.hasPrefix("sendmail: [31mbad [0m address second line 000"), "\(failure.excerpt)")
        #expect(failure.excerpt.hasSuffix("…"))
        #expect(failure.excerpt.count == SendmailProgram.excerptLimit + 1)
        #expect(failure.excerpt.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7f })
    }

    @Test func aSignalIsATemporaryFailure() throws {
        let directory = try ScratchDirectory()
        let path = try directory.script("killed", "cat > /dev/null\nkill -KILL $$")
        let outcome = SendmailProgram(path: path).handOff(Self.message, from: Self.sender, to: Self.recipient)
        #expect(outcome == .failed(SendmailFailure(reason: .signal, detail: "killed by signal 9")))
    }

    /// A program that hangs is sent SIGTERM at the (here injected) timeout, and the outcome says so.
    @Test func aProgramThatHangsTimesOutAndIsReaped() throws {
        let directory = try ScratchDirectory()
        let path = try directory.script("hang", "printf '%s\\n' \"$$\" > '\(directory.path)/pid'\nexec sleep 1000")
        // Long enough for the shell to write its pid on a loaded machine.
        let program = SendmailProgram(path: path, timeout: .seconds(1), killGrace: .seconds(5))
        let outcome = program.handOff(Self.message, from: Self.sender, to: Self.recipient)
        guard case .failed(let failure) = outcome else {
            Issue.record("handed off: \(outcome)")
            return
        }
        #expect(failure.reason == .timeout && failure.kind == .timedOut && failure.retryable)
        #expect(failure.detail == "no answer within 1s, terminated")
        let pid = try #require(directory.lines("pid")?.first.flatMap { pid_t($0) })
        #expect(alreadyReaped(pid))
    }

    /// A program that ignores SIGTERM, and whose own child does too, is killed with its whole group after the
    /// grace: nothing it started lives on.
    @Test func aProgramThatIgnoresSIGTERMIsKilledWithItsChildren() throws {
        let directory = try ScratchDirectory()
        let path = try directory.script("stubborn", """
            trap '' TERM
            sleep 1000 &
            printf '%s\\n' "$!" > '\(directory.path)/descendant'
            wait
            """)
        // Long enough for the shell to set its trap and start its child on a loaded machine.
        let run = ChildProcess.run(path: path, arguments: [], input: [],
                                   limits: ChildProcessLimits(timeout: .seconds(1), killGrace: .milliseconds(100)))
        #expect(run.ending == .timedOut(signal: SIGKILL))
        #expect(alreadyReaped(run.pid))
        let descendant = try #require(directory.lines("descendant")?.first.flatMap { pid_t($0) })
        #expect(poll { processIsDead(descendant) ? true : nil } == true, "its child \(descendant) still runs")
        let outcome = SendmailProgram.outcome(of: run, messageBytes: 0, timeout: .seconds(1))
        #expect(outcome == .failed(SendmailFailure(reason: .timeout, detail: "no answer within 1s, killed")))
    }

    /// A child that closes stdin unread makes our write fail with EPIPE: no SIGPIPE reaches the process (the test
    /// run would end here if it did, under the default disposition) or stays pending, and the message was not
    /// handed off, whatever the exit status.
    @Test func aProgramThatClosesStdinUnreadIsNoHandOffAndNoSIGPIPE() throws {
        let directory = try ScratchDirectory()
        let zero = try directory.script("close-zero", "exec 0<&-\nexit 0")
        let one = try directory.script("close-one", "exec 0<&-\necho 'no thanks' >&2\nexit 1")
        // Far more than a pipe holds, so the write meets the closed end.
        let big = [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20)
        let run = ChildProcess.run(path: zero, arguments: [], input: big, limits: ChildProcessLimits(timeout: .seconds(30)))
        #expect(run.ending == .exited(status: 0))
        #expect(run.inputWritten < big.count)
        #expect(alreadyReaped(run.pid))
        guard case .failed(let failure) = SendmailProgram(path: zero).handOff(big, from: Self.sender, to: Self.recipient) else {
            Issue.record("a message the program never read was taken as handed off")
            return
        }
        #expect(failure.reason == .messageNotRead && failure.retryable)
        #expect(failure.detail.hasPrefix("exit status 0 after reading "))
        let refused = SendmailProgram(path: one).handOff(big, from: Self.sender, to: Self.recipient)
        #expect(refused == .failed(SendmailFailure(reason: .exitStatus, detail: "exit status 1", excerpt: "no thanks")))
        var pending = sigset_t()
        sigpending(&pending)
        #expect(sigismember(&pending, SIGPIPE) == 0, "a SIGPIPE was left pending")
    }

    /// A program that writes megabytes to stdout and stderr before it reads stdin neither deadlocks the run nor
    /// grows it: 4 KiB of each is kept, the rest counted and dropped.
    @Test func aProgramThatFloodsItsOutputIsBoundedAndStillHandedOff() throws {
        let directory = try ScratchDirectory()
        let path = try directory.script("flood", """
            head -c 10000000 /dev/zero
            head -c 300000 /dev/zero | tr '\\000' 'e' >&2
            cat > /dev/null
            exit 0
            """)
        let input = [UInt8](repeating: UInt8(ascii: "m"), count: 1 << 20)
        let run = ChildProcess.run(path: path, arguments: [], input: input, limits: ChildProcessLimits(timeout: .seconds(60)))
        #expect(run.ending == .exited(status: 0))
        #expect(run.inputWritten == input.count)
        #expect(run.stdout.kept.count == 4096 && run.stdout.total == 10_000_000 && run.stdout.truncated)
        #expect(run.stderr.kept == [UInt8](repeating: UInt8(ascii: "e"), count: 4096) && run.stderr.total == 300_000)
        #expect(SendmailProgram.outcome(of: run, messageBytes: input.count, timeout: .seconds(60)) == .handedOff)
        #expect(SendmailProgram(path: path).handOff(input, from: Self.sender, to: Self.recipient) == .handedOff)
    }

    @Test func aProgramThatCannotStartSaysWhy() throws {
        let directory = try ScratchDirectory()
        let missing = SendmailProgram(path: directory.file("no-such-sendmail"))
            .handOff(Self.message, from: Self.sender, to: Self.recipient)
        guard case .failed(let notFound) = missing else {
            Issue.record("\(missing)")
            return
        }
        #expect(notFound.reason == .programNotFound && notFound.kind == .couldNotStart && notFound.retryable)
        #expect(notFound.detail.hasSuffix("No such file or directory"), "\(notFound.detail)")

        let notExecutable = try directory.script("no-x-bit", "exit 0", mode: 0o644)
        #expect(SendmailProgram(path: notExecutable).handOff(Self.message, from: Self.sender, to: Self.recipient).reason
                == "permission_denied")
        let noInterpreter = directory.file("no-shebang")
        try directory.write(noInterpreter, "exit 0\n", mode: 0o755)
        #expect(SendmailProgram(path: noInterpreter).handOff(Self.message, from: Self.sender, to: Self.recipient).reason
                == "not_executable")
    }

    /// What would be read as an option, or split into two arguments, or end a header, never reaches the program.
    @Test func addressesThatCouldInjectArgumentsAreRefusedBeforeAnythingRuns() throws {
        let directory = try ScratchDirectory()
        let program = SendmailProgram(path: try Self.recorder(in: directory))
        for bad in ["-oQ/tmp/x@example.org", "-t", "", "alice @example.com", "alice@example.com\nBcc: eve@example.org",
                    "a\u{0}b@example.org", "tab\t@example.org", "nbsp\u{a0}@example.org", "rlo\u{202e}@example.org"] {
            let asRecipient = program.handOff(Self.message, from: Self.sender, to: bad)
            guard case .failed(let failure) = asRecipient else {
                Issue.record("\(bad.debugDescription) was handed off")
                continue
            }
            #expect(failure.reason == .invalidRecipient && failure.kind == .refused && !failure.retryable)
            #expect(program.handOff(Self.message, from: bad, to: Self.recipient).reason == "invalid_sender")
        }
        #expect(directory.read("argv") == nil, "the program ran")
        // Unicode mail addresses (SMTPUTF8) are the mail system's business, not refused here.
        #expect(program.handOff(Self.message, from: Self.sender, to: "用户@例子.广告") == .handedOff)
        #expect(directory.lines("argv")?.last == "用户@例子.广告")
    }

    /// Many runs, each way of ending, leave this process with the descriptors it had (give or take what tests
    /// running beside this one open meanwhile: a leak would be three or four a run).
    @Test func runsOfEveryKindLeaveNoDescriptorBehind() throws {
        let directory = try ScratchDirectory()
        let ok = try directory.script("ok", "cat > /dev/null")
        let fail = try directory.script("fail", "echo no >&2\nexit 1")
        let hang = try directory.script("hang", "exec sleep 1000")
        let pipesBefore = OpenDescriptors.targets().values.filter { $0.hasPrefix("pipe:") || $0.contains("pidfd") }.count
        let limits = ChildProcessLimits(timeout: .milliseconds(50), killGrace: .milliseconds(50))
        for round in 0..<10 {
            for path in [ok, fail, hang, directory.file("missing")] {
                let run = ChildProcess.run(path: path, arguments: ["\(round)"], input: Self.message, limits: limits)
                if run.pid != 0 { #expect(alreadyReaped(run.pid)) }
            }
        }
        let pipesAfter = OpenDescriptors.targets().values.filter { $0.hasPrefix("pipe:") || $0.contains("pidfd") }.count
        #expect(pipesAfter <= pipesBefore + 8, "\(pipesBefore) pipes and pidfds before 40 runs, \(pipesAfter) after")
    }

    /// On a worker, off the loop: the outcome comes back on the loop's thread; a lane that refuses the job
    /// answers `lane_busy` at once.
    @Test func onAPoolTheOutcomeComesBackOnTheLoop() throws {
        let directory = try ScratchDirectory()
        let program = SendmailProgram(path: try Self.recorder(in: directory))
        let loop = try EventLoop(signals: [])
        let budget = QueueBudget(jobs: 4, jobsPerPayer: 4, jobsPerConnection: 4, bytes: 1 << 20, bytesPerPayer: 1 << 20)
        let pool = WorkerPool<Void>(threads: 1, budget: budget, priority: .normal) { () }
        let charge = QueueCharge(payer: .account(1), connection: 1)
        let loopThread = pthread_self()
        var outcome: SendmailOutcome?
        var onLoop = false
        program.handOff(Self.message, from: Self.sender, to: Self.recipient, on: pool, loop: loop, charge: charge) {
            outcome = $0
            onLoop = pthread_equal(pthread_self(), loopThread) != 0
        }
        let deadline = loop.now + .seconds(15)
        while outcome == nil && loop.now < deadline { try loop.runOnce(timeoutMs: 10) }
        #expect(outcome == .handedOff)
        #expect(onLoop)
        #expect(directory.read("stdin") == Self.message)

        pool.stopAndWait()
        var refused: SendmailOutcome?
        program.handOff(Self.message, from: Self.sender, to: Self.recipient, on: pool, loop: loop, charge: charge) {
            refused = $0
        }
        #expect(refused?.reason == "lane_busy")
    }

    @Test func theExcerptIsOneShortPrintableLine() {
        #expect(SendmailProgram.excerpt(Array("  first\n\n\tsecond\u{1b}[0m  \r\n".utf8)) == "first second [0m")
        #expect(SendmailProgram.excerpt([0xff, 0xfe, 0x41]) == "\u{fffd}\u{fffd}A")
        #expect(SendmailProgram.excerpt(Array("a\u{202e}b\u{2028}c".utf8)) == "a b c")
        #expect(SendmailProgram.excerpt([]) == "")
        let long = SendmailProgram.excerpt(Array(String(repeating: "é", count: 500).utf8))
        #expect(long == String(repeating: "é", count: SendmailProgram.excerptLimit) + "…")
    }

    @Test func everyReasonHasAStableSpellingAndKind() {
        #expect(SendmailFailureReason.allCases.map(\.rawValue) == [
            "tempfail", "exit_status", "signal", "message_not_read", "status_unknown", "timeout", "program_not_found",
            "permission_denied", "not_executable", "start_failed", "lane_busy", "invalid_sender", "invalid_recipient",
        ])
        #expect(SendmailFailureReason.allCases.filter { $0.kind == .refused } == [.invalidSender, .invalidRecipient])
    }
}
