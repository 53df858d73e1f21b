import RosterClient
import RosterProtocol

/// `rosterctl login`: the log-in form on a terminal, or `--username` with `--password-stdin`/`$ROSTER_PASSWORD`
/// as a script. The session token is kept so later commands act as this user.
struct LoginVerb: Verb {
    static let configuration = VerbConfiguration(
        name: "login", usage: "login [--username NAME] [--password-stdin]",
        summary: "Log in and keep the session for later commands (a form on a terminal)", group: .session,
        options: [("--username NAME", "The username or email (needed when stdin is not a terminal)"),
                  ("--password-stdin", "Read the password from stdin and skip the form")])

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
        guard PasswordSource.choose(passwordStdin: passwordStdin, environment: context.environment) != nil else {
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
        guard let username, let source = PasswordSource.choose(passwordStdin: passwordStdin, environment: context.environment)
        else { return 2 }
        let password = try source.read(confirm: false)
        let connection = try context.connect(resume: false)
        connection.answerTimeoutMs = nil
        switch try connection.call("auth.login", ["username": .string(username), "password": .string(password)]) {
        case .success(let result):
            context.storeToken(result["token"]?.stringValue)
            return FormVerbSupport.succeeded(result, message: "", context: context)
        case .failure(let error):
            throw failure("login", error)
        }
    }
}
