import RosterClient
import RosterProtocol

/// `rosterctl register`: the register form on a terminal; with stdin not a terminal, a script that reads
/// `--username`, `--email` and the password from `--password-stdin` or `$ROSTER_PASSWORD`.
struct RegisterVerb: Verb {
    static let configuration = VerbConfiguration(
        name: "register", usage: "register [--username NAME] [--email ADDRESS] [--password-stdin]",
        summary: "Create an account and log in (an interactive form on a terminal)", group: .session,
        options: [("--username NAME", "The username (needed when stdin is not a terminal)"),
                  ("--email ADDRESS", "An optional email address"),
                  ("--password-stdin", "Read the password from stdin and skip the form")])

    let username: String?
    let email: String?
    let passwordStdin: Bool

    init(arguments: [String]) throws(UsageError) {
        let parsed = try VerbArguments(arguments, verb: "register", flags: ["--password-stdin"], valued: ["--username", "--email"])
        _ = try parsed.positionals(min: 0, max: 0, verb: "register", usage: Self.configuration.usage)
        username = parsed.values["--username"]
        email = parsed.values["--email"].flatMap { $0.isEmpty ? nil : $0 }
        passwordStdin = parsed.flags.contains("--password-stdin")
    }

    private func interactive(_ context: VerbContext) -> Bool {
        !passwordStdin && canRunInteractively(environment: context.environment)
    }

    func validate(_ context: VerbContext) throws(UsageError) {
        guard !interactive(context) else { return }
        guard username != nil else { throw UsageError(description: "register: --username NAME is needed when stdin is not a terminal") }
        guard SecretSource.choose(.password, passwordStdin: passwordStdin, environment: context.environment) != nil else {
            throw UsageError(description: "register: give the password with --password-stdin or ROSTER_PASSWORD")
        }
    }

    func run(_ context: VerbContext) throws -> Int32 {
        if interactive(context) {
            var prefill: [(field: String, value: String)] = []
            if let username { prefill.append(("username", username)) }
            if let email { prefill.append(("email", email)) }
            return try FormVerbSupport.runInteractive(form: "register", context: context, prefill: prefill)
        }
        guard let username, let source = SecretSource.choose(.password, passwordStdin: passwordStdin, environment: context.environment)
        else { return 2 }
        let password = try source.read(.newAccountPassword)
        let connection = try context.connect(resume: false)
        connection.answerTimeoutMs = nil
        var params: [(String, JSONValue)] = [("username", .string(username)), ("password", .string(password))]
        if let email { params.append(("email", .string(email))) }
        let registered: JSONValue
        switch try connection.call("users.register", .object(params)) {
        case .success(let value): registered = value
        case .failure(let error): throw failure("register", error)
        }
        // users.register does not log in; the form would have, so the script path does it too (seed 001).
        switch try connection.call("auth.login", ["username": .string(username), "password": .string(password)]) {
        case .success(let value): context.storeToken(value["token"]?.stringValue)
        case .failure(let error): writeError("rosterctl: warning: registered, but logging in failed: \(error)")
        }
        return FormVerbSupport.succeeded(registered, message: "", context: context)
    }
}
