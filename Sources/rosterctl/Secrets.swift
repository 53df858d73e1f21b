import Glibc

/// Where a password comes from: never argv. `--password-stdin` reads one line, else `$ROSTER_PASSWORD`,
/// else a prompt with echo off when stdin is a terminal.
enum PasswordSource {
    case standardInput
    case environment(String)
    case prompt

    /// The source for these flags and this environment; nil when there is none (a script without either).
    static func choose(passwordStdin: Bool, environment: [String: String]) -> PasswordSource? {
        if passwordStdin { return .standardInput }
        if let value = environment["ROSTER_PASSWORD"], !value.isEmpty { return .environment(value) }
        return isatty(0) == 1 ? .prompt : nil
    }

    /// Reads the password; `confirm` asks twice at a prompt (a new password typed blind deserves a check).
    func read(confirm: Bool) throws(CommandFailure) -> String {
        switch self {
        case .standardInput:
            guard let line = readStandardInputLine(), !line.isEmpty else {
                throw CommandFailure(description: "--password-stdin: no password on standard input")
            }
            return line
        case .environment(let value):
            return value
        case .prompt:
            let first = try promptHidden("Password: ")
            guard confirm else { return first }
            guard try promptHidden("Repeat password: ") == first else {
                throw CommandFailure(description: "the passwords differ")
            }
            return first
        }
    }
}

/// One line of stdin without its line ending, read byte by byte so nothing after it is consumed.
func readStandardInputLine() -> String? {
    var bytes: [UInt8] = []
    var byte: UInt8 = 0
    while true {
        let count = read(0, &byte, 1)
        if count < 0 && errno == EINTR { continue }
        if count <= 0 { break }
        if byte == 0x0A { break }
        bytes.append(byte)
    }
    if bytes.last == 0x0D { bytes.removeLast() }
    return bytes.isEmpty && byte != 0x0A ? nil : String(decoding: bytes, as: UTF8.self)
}

/// Asks on the terminal with echo off; echo comes back even if reading fails.
private func promptHidden(_ prompt: String) throws(CommandFailure) -> String {
    let saved = TerminalSettings()
    guard saved.load(from: 0) else { throw CommandFailure(description: "cannot read the terminal's settings") }
    let quiet = saved.copy()
    quiet.pointer.pointee.c_lflag &= ~tcflag_t(ECHO)
    writeRaw(2, prompt)
    quiet.apply(to: 0)
    let line = readStandardInputLine()
    saved.apply(to: 0)
    writeRaw(2, "\n")
    guard let line, !line.isEmpty else { throw CommandFailure(description: "no password given") }
    return line
}
