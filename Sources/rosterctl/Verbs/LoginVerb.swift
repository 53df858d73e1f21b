import RosterClient
import RosterProtocol

/// `rosterctl login`: the log-in form on a terminal, or `--username` with `--password-stdin`/`$ROSTER_PASSWORD`
/// as a script, and the one-time code when the daemon answers `code_required`. The session token is kept so
/// later commands act as this user.
struct LoginVerb: Verb {
    static let configuration = VerbConfiguration(
        name: "login", usage: "login [--username NAME] [--password-stdin]",
        summary: "Log in and keep the session for later commands (a form on a terminal)", group: .session,
        options: [("--username NAME", "The username or email (needed when stdin is not a terminal)"),
                  ("--password-stdin", "Read the password (then a one-time code, if asked) from stdin; no form")])

    let username: String?
    let passwordStdin: Bool

    init(arguments: [String]) throws(UsageError) {
        let parsed = try VerbArguments(arguments, verb: "login", flags: ["--password-stdin"], valued: ["--username"])
        _ = try parsed.positionals(min: 0, max: 0, verb: "login", usage: Self.configuration.usage)
        username = parsed.values["--username"]
        passwordStdin = parsed.flags.contains("--password-stdin")
    }

    private func interactive(_ context: VerbContext) -> Bool {
        !passwordStdin && canRunInteractively(environment: context.environment)
    }

    func validate(_ context: VerbContext) throws(UsageError) {
        guard !interactive(context) else { return }
        guard username != nil else { throw UsageError(description: "login: --username NAME is needed when stdin is not a terminal") }
        guard SecretSource.choose(.password, passwordStdin: passwordStdin, environment: context.environment) != nil else {
            throw UsageError(description: "login: give the password with --password-stdin or ROSTER_PASSWORD")
        }
    }

    func run(_ context: VerbContext) throws -> Int32 {
        // Refuse before asking for a password: a log-in that cannot be kept is of no use to later commands.
        guard context.sessionFile != nil else { throw CommandFailure(description: "login: \(SessionFile.Failure.noRuntimeDirectory)") }
        if interactive(context) {
            let prefill: [(field: String, value: String)] = username.map { [("username", $0)] } ?? []
            return try FormVerbSupport.runInteractive(form: "login", context: context, prefill: prefill)
        }
        guard let username, let source = SecretSource.choose(.password, passwordStdin: passwordStdin, environment: context.environment)
        else { return 2 }
        let password = try source.read(.password)
        let connection = try context.connect(resume: false)
        connection.answerTimeoutMs = nil
        var params: [(String, JSONValue)] = [("username", .string(username)), ("password", .string(password))]
        switch try connection.call("auth.login", .object(params)) {
        case .success(let result):
            context.storeToken(result["token"]?.stringValue)
            return FormVerbSupport.succeeded(result, message: "", context: context)
        case .failure(let error) where error.reason == "code_required":
            // The password was right and the account has TOTP: the same password again, now with the code.
            params.append(("code", .string(try oneTimeCode(context))))
            let result = try connection.result("auth.login", .object(params), verb: "login")
            context.storeToken(result["token"]?.stringValue)
            return FormVerbSupport.succeeded(result, message: "", context: context)
        case .failure(let error):
            throw failure("login", error)
        }
    }

    /// The code only the daemon knew was needed: stdin's next line with `--password-stdin`, else `$ROSTER_CODE`,
    /// else a prompt on a terminal. Never an argument: `ps` would show it to others while it is still good.
    private func oneTimeCode(_ context: VerbContext) throws(CommandFailure) -> String {
        guard let source = SecretSource.choose(.oneTimeCode, passwordStdin: passwordStdin, environment: context.environment) else {
            throw CommandFailure(description: "login: this account needs a one-time code; "
                                 + "give it with ROSTER_CODE or as the line after the password with --password-stdin")
        }
        return try source.read(.oneTimeCode)
    }
}
