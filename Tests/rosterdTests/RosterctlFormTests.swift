import Glibc
import RosterProtocol
import Testing

/// A private tmux server running one command in a 100-column pane (30 rows unless asked), driven with send-keys and read with capture-pane.
final class TmuxPane {
    let name: String
    private let directory: TemporaryDirectory
    private static let environment = ["PATH=/usr/bin:/bin", "TERM=xterm-256color"]

    init(_ command: String, rows: Int = 30) throws {
        directory = try TemporaryDirectory()
        // Unique per test and per process, so parallel runs never share a server.
        name = "roster-test-\(getpid())-\(directory.path.split(separator: "-").last ?? "x")"
        let status = run(["/usr/bin/tmux", "-f", "/dev/null", "-L", name, "new-session", "-d", "-x", "100", "-y", String(rows), command],
                         environment: Self.environment)
        guard status == 0 else { throw HarnessError(description: "tmux new-session failed with \(status)") }
    }

    func send(_ keys: String...) {
        run(["/usr/bin/tmux", "-L", name, "send-keys"] + keys, environment: Self.environment)
    }

    /// Sends text literally (-l), so "abc" is three keys rather than a key name.
    func type(_ text: String) {
        run(["/usr/bin/tmux", "-L", name, "send-keys", "-l", text], environment: Self.environment)
    }

    func screen() -> String {
        (try? capture(["/usr/bin/tmux", "-L", name, "capture-pane", "-p"], environment: Self.environment, in: directory).stdout) ?? ""
    }

    /// Whether `text` appears on the screen within the timeout; returns as soon as it does.
    func waitFor(_ text: String, timeoutMs: Int = 10_000) -> Bool {
        eventually(timeoutMs: timeoutMs) { screen().contains(text) }
    }

    /// The screen line holding `text`, and the line under it (where a field's verdict is drawn).
    func lineAndNext(containing text: String) -> (String, String)? {
        let lines = screen().split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let index = lines.firstIndex(where: { $0.contains(text) }), index + 1 < lines.count else { return nil }
        return (lines[index], lines[index + 1])
    }

    deinit { run(["/usr/bin/tmux", "-L", name, "kill-server"], environment: Self.environment) }
}

extension Rosterctl {
    /// Starts `rosterctl ARGS` in a pane; afterwards the pane prints its exit status and the terminal's modes.
    func startInTmux(_ arguments: String, rows: Int = 30) throws -> TmuxPane {
        let modes = "stty -a | tr ' ;' '\\n\\n' | grep -x -e icanon -e -icanon -e echo -e -echo | tr '\\n' ' '"
        let command = "env XDG_RUNTIME_DIR=\(runtime) \(builtBinary("rosterctl")) --socket \(daemon.socketPath) \(arguments); "
            + "echo EXIT=$?; echo MODES=$(\(modes)); sleep 600"
        return try TmuxPane(command, rows: rows)
    }
}

/// The interactive register and log-in forms in a real terminal (tmux), against the real daemon, with the
/// real 500 ms debounce.
@Suite("rosterctl interactive forms in tmux", .serialized)
struct RosterctlFormTests {
    private func start(_ ctl: Rosterctl, _ arguments: String) throws -> TmuxPane {
        try ctl.startInTmux(arguments)
    }

    @Test func aShortUsernameShowsTheSeedMessageUnderTheField() throws {
        let ctl = try Rosterctl(TestDaemon())
        let pane = try start(ctl, "--locale zh-Hans register")
        #expect(pane.waitFor("注册新账号"))
        pane.type("abc")
        #expect(pane.waitFor("用户名长度至少为6位"))
        let (field, verdict) = try #require(pane.lineAndNext(containing: "用户名 "))
        #expect(field.contains("[abc"))
        #expect(verdict.contains("✗ 用户名长度至少为6位"))
    }

    @Test func completingTheUsernameShowsItIsAvailable() throws {
        let ctl = try Rosterctl(TestDaemon())
        let pane = try start(ctl, "--locale zh-Hans register")
        #expect(pane.waitFor("注册新账号"))
        pane.type("abc")
        #expect(pane.waitFor("用户名长度至少为6位"))
        pane.type("def1")
        #expect(pane.waitFor("用户名可用"))
        let (field, verdict) = try #require(pane.lineAndNext(containing: "用户名 "))
        #expect(field.contains("[abcdef1"))
        #expect(verdict.contains("✓ 用户名可用"))
    }

    @Test func thePasswordFieldIsRefusedWhileTheUsernameIsInvalid() throws {
        let ctl = try Rosterctl(TestDaemon())
        let pane = try start(ctl, "--locale zh-Hans register")
        #expect(pane.waitFor("注册新账号"))
        pane.type("abc")
        #expect(pane.waitFor("用户名长度至少为6位"))
        // Tab skips the disabled password and confirm fields: the keys land in the email field instead.
        pane.send("Tab")
        pane.type("xy")
        #expect(pane.waitFor("[xy"))
        let (password, _) = try #require(pane.lineAndNext(containing: "  密码"))
        #expect(!password.contains("•"))
        let (email, _) = try #require(pane.lineAndNext(containing: "邮箱 "))
        #expect(email.contains("› 邮箱"))
        #expect(email.contains("[xy"))
    }

    @Test func aFullRegistrationSucceedsAndIsKept() throws {
        let ctl = try Rosterctl(TestDaemon())
        let pane = try start(ctl, "--locale zh-Hans register")
        #expect(pane.waitFor("注册新账号"))
        pane.type("alice12")
        #expect(pane.waitFor("用户名可用"))
        pane.send("Tab")
        pane.type("secret1")
        #expect(pane.waitFor("密码可用"))
        pane.send("Tab")
        pane.type("secret1")
        #expect(eventually { pane.screen().components(separatedBy: "✓ 密码可用").count == 3 })
        #expect(pane.lineAndNext(containing: "确认密码")?.0.contains("[•••••••") == true)
        #expect(eventually { !pane.screen().contains("尚未填写完整") })
        pane.send("Enter")
        #expect(pane.waitFor("EXIT=0"))
        #expect(pane.screen().contains("✓ 注册成功 alice12"))
        #expect(!pane.screen().contains("secret1"))
        #expect(fileMode(ctl.sessionPath) == 0o600)
        #expect(try ctl.run(["whoami"]).stdout == "alice12\n")
    }

    @Test func ctrlCCancelsWith130AndRestoresTheTerminal() throws {
        let ctl = try Rosterctl(TestDaemon())
        let pane = try start(ctl, "--locale en login")
        #expect(pane.waitFor("Username or email"))
        pane.type("ali")
        pane.send("C-c")
        #expect(pane.waitFor("EXIT=130"))
        #expect(pane.waitFor("MODES=icanon echo"))
    }

    @Test func escapeCancelsAndALogInThroughTheFormIsKept() throws {
        let ctl = try Rosterctl(TestDaemon())
        #expect(try ctl.run(["user", "add", "bob123", "--password-stdin"], input: "pw12345\n").status == 0)
        let cancelled = try start(ctl, "--locale en login")
        #expect(cancelled.waitFor("Username or email"))
        cancelled.send("Escape")
        #expect(cancelled.waitFor("EXIT=130"))
        let pane = try start(ctl, "--locale en login")
        #expect(pane.waitFor("Username or email"))
        pane.type("bob123")
        pane.send("Down")
        pane.type("pw12345")
        #expect(pane.waitFor("Password entered"))
        pane.send("Enter")
        #expect(pane.waitFor("EXIT=0"))
        #expect(pane.screen().contains("bob123"))
        #expect(try ctl.run(["whoami"]).stdout == "bob123\n")
    }
}
