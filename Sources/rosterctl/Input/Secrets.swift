import Glibc

/// One secret a verb asks for: what it is called in messages, the variable that may hold it, and its prompt.
struct Secret: Equatable {
    let name: String
    let variable: String
    let prompt: String
    /// A prompt asks twice (a new password typed blind deserves a check).
    var confirm = false
    /// Echo off at the prompt; a one-time code, dead within a minute, is shown as it is typed.
    var hidden = true

    static let password = Secret(name: "password", variable: "ROSTER_PASSWORD", prompt: "Password: ")
    static let newAccountPassword = Secret(name: "password", variable: "ROSTER_PASSWORD", prompt: "Password: ", confirm: true)
    static let currentPassword = Secret(name: "current password", variable: "ROSTER_PASSWORD", prompt: "Current password: ")
    static let newPassword = Secret(name: "new password", variable: "ROSTER_NEW_PASSWORD", prompt: "New password: ", confirm: true)
    static let oneTimeCode = Secret(name: "one-time code", variable: "ROSTER_CODE", prompt: "One-time code: ", hidden: false)
    static let recoveryCode = Secret(name: "recovery code", variable: "ROSTER_RECOVERY_CODE", prompt: "Recovery code: ")
    /// Mailed once the command has asked for it, so only a prompt or stdin can hold it, never a variable set before;
    /// six digits, typed at once and dead after one use, so shown as typed.
    static let mailedCode = Secret(name: "mailed code", variable: "ROSTER_RECOVERY_CODE", prompt: "Code from the mail: ",
                                   hidden: false)

    /// What a script without any source of this secret is told.
    func missing(verb: String) -> String { "\(verb): give the \(name) with --password-stdin or \(variable)" }
}

/// Where a secret comes from: never argv. With `--password-stdin` every secret a verb needs is the next line of
/// stdin, in the order the verb documents; else the secret's variable (`$ROSTER_PASSWORD`, …); else a prompt
/// when stdin is a terminal.
enum SecretSource: Equatable {
    case standardInput
    case environment(String)
    case prompt

    /// The source of `secret` for this flag and environment; nil when there is none (a script without either).
    static func choose(_ secret: Secret, passwordStdin: Bool, environment: [String: String],
                       terminal: Bool = isatty(0) == 1) -> SecretSource? {
        if passwordStdin { return .standardInput }
        if let value = environment[secret.variable], !value.isEmpty { return .environment(value) }
        return terminal ? .prompt : nil
    }

    /// Reads the secret from this source.
    func read(_ secret: Secret) throws(CommandFailure) -> String {
        switch self {
        case .standardInput:
            guard let line = readStandardInputLine(), !line.isEmpty else {
                throw CommandFailure(description: "--password-stdin: no \(secret.name) on standard input")
            }
            return line
        case .environment(let value):
            return value
        case .prompt:
            let first = try promptLine(secret.prompt, hidden: secret.hidden, what: secret.name)
            guard secret.confirm else { return first }
            guard try promptLine("Repeat \(secret.prompt.prefix(1).lowercased())\(secret.prompt.dropFirst())",
                                 hidden: secret.hidden, what: secret.name) == first else {
                throw CommandFailure(description: "the \(secret.name)s differ")
            }
            return first
        }
    }
}

/// Finds and reads one secret, or fails saying how to give it (a prompt is only possible on a terminal).
func readSecret(_ secret: Secret, passwordStdin: Bool, context: VerbContext, verb: String) throws(CommandFailure) -> String {
    guard let source = SecretSource.choose(secret, passwordStdin: passwordStdin, environment: context.environment) else {
        throw CommandFailure(description: secret.missing(verb: verb))
    }
    return try source.read(secret)
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

/// Asks on the terminal (stderr, so stdout stays the command's output); with `hidden`, echo is off and comes
/// back even if reading fails.
func promptLine(_ prompt: String, hidden: Bool, what: String) throws(CommandFailure) -> String {
    writeRaw(2, prompt)
    guard hidden else {
        guard let line = readStandardInputLine(), !line.isEmpty else { throw CommandFailure(description: "no \(what) given") }
        return line
    }
    let saved = TerminalSettings()
    guard saved.load(from: 0) else { throw CommandFailure(description: "cannot read the terminal's settings") }
    let quiet = saved.copy()
    quiet.pointer.pointee.c_lflag &= ~tcflag_t(ECHO)
    quiet.apply(to: 0)
    let line = readStandardInputLine()
    saved.apply(to: 0)
    writeRaw(2, "\n")
    guard let line, !line.isEmpty else { throw CommandFailure(description: "no \(what) given") }
    return line
}
