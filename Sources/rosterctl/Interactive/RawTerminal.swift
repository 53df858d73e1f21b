import Glibc

// The settings to put back, kept where a crash handler and atexit can reach them without Swift machinery.
private let savedSettings = TerminalSettings()
nonisolated(unsafe) private var savedFD: Int32 = -1
nonisolated(unsafe) private var rawActive = false

/// Puts the terminal back: cooked mode, cursor shown, attributes off, main screen. Async-signal-safe (only
/// write and tcsetattr on prepared data), so the crash handlers may call it; harmless when already restored.
private func restoreTerminalNow() {
    guard rawActive else { return }
    rawActive = false
    let leave = "\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l"
    _ = leave.withCString { write(1, $0, strlen($0)) }
    savedSettings.apply(to: savedFD)
}

/// Raw mode for the interactive forms, restored on every way out: `restore()`, exit (atexit), and fatal
/// signals (a handler restores, then re-raises with the default action so the crash still reads as one).
final class RawTerminal {
    private let input: Int32

    init(input: Int32 = 0) throws(CommandFailure) {
        self.input = input
        guard savedSettings.load(from: input) else {
            throw CommandFailure(description: "cannot read the terminal's settings: \(String(cString: strerror(errno)))")
        }
        savedFD = input
        atexit { restoreTerminalNow() }
        for signal in [SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGFPE, SIGABRT] {
            Glibc.signal(signal) { number in
                restoreTerminalNow()
                Glibc.signal(number, SIG_DFL)
                raise(number)
            }
        }
    }

    /// Raw input (no echo, no line buffering, no signals from keys, no flow control), alternate screen.
    ///
    /// TCSANOW, not TCSAFLUSH: flushing would drop keys typed ahead while the daemon was being asked.
    func enter() {
        let raw = savedSettings.copy()
        raw.pointer.pointee.c_iflag &= ~tcflag_t(IXON | ICRNL | BRKINT | INPCK | ISTRIP)
        raw.pointer.pointee.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG | IEXTEN)
        raw.pointer.pointee.c_cflag |= tcflag_t(CS8)
        withUnsafeMutableBytes(of: &raw.pointer.pointee.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        rawActive = true
        raw.apply(to: input)
        writeRaw(1, "\u{1B}[?1049h\u{1B}[H\u{1B}[2J")
    }

    func restore() { restoreTerminalNow() }

    /// Rows and columns; a terminal that reports 0×0 (expect, script, some CI) is taken as 80×24.
    func size() -> (rows: Int, columns: Int) {
        var window = winsize()
        guard ioctl(1, UInt(TIOCGWINSZ), &window) == 0, window.ws_row > 0, window.ws_col > 0 else { return (24, 80) }
        return (Int(window.ws_row), Int(window.ws_col))
    }
}

/// Whether the interactive forms can run: keys from a terminal, a terminal to draw on, and one that can move
/// its cursor (TERM=dumb cannot).
func canRunInteractively(environment: [String: String]) -> Bool {
    isatty(0) == 1 && isatty(1) == 1 && environment["TERM"] != "dumb"
}
