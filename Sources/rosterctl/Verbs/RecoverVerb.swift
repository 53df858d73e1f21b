import Glibc
import RosterProtocol

/// `rosterctl recover --username NAME`: a recovery code (or a code mailed by `recover --email`) sets a new password
/// and logs in (no session needed). The code and the new password come from prompts, `$ROSTER_RECOVERY_CODE` and
/// `$ROSTER_NEW_PASSWORD`, or with `--password-stdin` from stdin's first and second lines.
///
/// `rosterctl recover --email NAME` first asks the daemon to mail a code to the account's verified email, then
/// asks for that code (a prompt, or stdin's first line with `--password-stdin`) and the new password. With neither
/// a terminal nor `--password-stdin` it only starts: the mailed code then goes to `recover --username NAME`.
struct RecoverVerb: Verb {
    static let configuration = VerbConfiguration(
        name: "recover", usage: "recover --username NAME|--email NAME [--password-stdin]",
        summary: "Set a new password with a recovery or mailed code, and log in", group: .account,
        options: [("--username NAME", "The account's username or email; the code is a recovery code or a mailed one"),
                  ("--email NAME", "Mail a code to the verified email of this account (a username or email) first"),
                  ("--password-stdin", "Read the code, then the new password, from stdin")])

    let username: String
    /// `--email`: the code is mailed by this command, so it can only come from a prompt or stdin.
    let byMail: Bool
    let passwordStdin: Bool

    init(arguments: [String]) throws(UsageError) {
        let parsed = try VerbArguments(arguments, verb: "recover", flags: ["--password-stdin"],
                                       valued: ["--username", "--email"])
        _ = try parsed.positionals(min: 0, max: 0, verb: "recover", usage: Self.configuration.usage)
        switch (parsed.values["--username"], parsed.values["--email"]) {
        case (let username?, nil) where !username.isEmpty:
            self.username = username
            byMail = false
        case (nil, let username?) where !username.isEmpty:
            self.username = username
            byMail = true
        case (_?, _?):
            throw UsageError(description: "recover: --username NAME or --email NAME, not both")
        default:
            throw UsageError(description: "recover: --username NAME (a recovery code) or --email NAME (a mailed code) is needed")
        }
        passwordStdin = parsed.flags.contains("--password-stdin")
    }

    func validate(_ context: VerbContext) throws(UsageError) {
        guard !byMail else { return }
        for secret in [Secret.recoveryCode, .newPassword]
        where SecretSource.choose(secret, passwordStdin: passwordStdin, environment: context.environment) == nil {
            throw UsageError(description: secret.missing(verb: "recover"))
        }
    }

    func run(_ context: VerbContext) throws -> Int32 {
        guard byMail else {
            let code = try readSecret(.recoveryCode, passwordStdin: passwordStdin, context: context, verb: "recover")
            return try recover(code: code, context)
        }
        let connection = try context.connect(resume: false)
        // The answer is the same whether or not the account exists or has a verified email, and so is what is said.
        _ = try connection.result("auth.recover_start", ["username": .string(username)], verb: "recover")
        writeError("rosterctl: if \(username) has a verified email, a code is on its way to it")
        guard let source = Self.mailedCodeSource(passwordStdin: passwordStdin) else {
            writeError("rosterctl: set the new password with the mailed code: rosterctl recover --username \(username)")
            return 0
        }
        return try recover(code: source.read(.mailedCode), context)
    }

    /// Where `--email` reads the code it had mailed: no variable, since none was set after the mail.
    static func mailedCodeSource(passwordStdin: Bool, terminal: Bool = isatty(0) == 1) -> SecretSource? {
        passwordStdin ? .standardInput : terminal ? .prompt : nil
    }

    private func recover(code: String, _ context: VerbContext) throws -> Int32 {
        let password = try readSecret(.newPassword, passwordStdin: passwordStdin, context: context, verb: "recover")
        let connection = try context.connect(resume: false)
        connection.answerTimeoutMs = nil
        let result = try connection.result("auth.recover", ["username": .string(username), "code": .string(code),
                                                            "new_password": .string(password)], verb: "recover")
        // The password is already changed: a log-in that cannot be kept is only a warning (storeToken says so).
        context.storeToken(result["token"]?.stringValue)
        return FormVerbSupport.succeeded(result, message: "", context: context)
    }
}
