import RosterProtocol

/// `rosterctl recover --username NAME`: a recovery code sets a new password and logs in (no session needed).
/// The code and the new password come from prompts, `$ROSTER_RECOVERY_CODE` and `$ROSTER_NEW_PASSWORD`, or
/// with `--password-stdin` from stdin's first and second lines.
struct RecoverVerb: Verb {
    static let configuration = VerbConfiguration(
        name: "recover", usage: "recover --username NAME [--password-stdin]",
        summary: "Set a new password with a recovery code, and log in", group: .account,
        options: [("--username NAME", "The account's username or email"),
                  ("--password-stdin", "Read the recovery code, then the new password, from stdin")])

    let username: String
    let passwordStdin: Bool

    init(arguments: [String]) throws(UsageError) {
        let parsed = try VerbArguments(arguments, verb: "recover", flags: ["--password-stdin"], valued: ["--username"])
        _ = try parsed.positionals(min: 0, max: 0, verb: "recover", usage: Self.configuration.usage)
        guard let username = parsed.values["--username"], !username.isEmpty else {
            throw UsageError(description: "recover: --username NAME is needed")
        }
        self.username = username
        passwordStdin = parsed.flags.contains("--password-stdin")
    }

    func validate(_ context: VerbContext) throws(UsageError) {
        for secret in [Secret.recoveryCode, .newPassword]
        where SecretSource.choose(secret, passwordStdin: passwordStdin, environment: context.environment) == nil {
            throw UsageError(description: secret.missing(verb: "recover"))
        }
    }

    func run(_ context: VerbContext) throws -> Int32 {
        let code = try readSecret(.recoveryCode, passwordStdin: passwordStdin, context: context, verb: "recover")
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
