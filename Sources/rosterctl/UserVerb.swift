import Glibc
import RosterProtocol

/// `rosterctl user add NAME [--email ADDRESS] [--password-stdin]`: creates an account without logging in.
struct UserVerb: Verb {
    static let configuration = VerbConfiguration(
        name: "user", usage: "user add NAME [--email ADDRESS] [--password-stdin]",
        summary: "Create an account (password from stdin, $ROSTER_PASSWORD or a prompt)", group: .users,
        options: [("--email ADDRESS", "Give the account an email address"),
                  ("--password-stdin", "Read the password from the first line of standard input")])

    let username: String
    let email: String?
    let passwordStdin: Bool

    init(arguments: [String]) throws(UsageError) {
        let parsed = try VerbArguments(arguments, verb: "user add", flags: ["--password-stdin"], valued: ["--email"])
        let words = try parsed.positionals(min: 2, max: 2, verb: "user", usage: Self.configuration.usage)
        guard words[0] == "add" else { throw UsageError(description: "user: unknown action '\(words[0])'; only 'user add NAME'") }
        username = words[1]
        email = parsed.values["--email"]
        passwordStdin = parsed.flags.contains("--password-stdin")
    }

    func validate(_ context: VerbContext) throws(UsageError) {
        if SecretSource.choose(.password, passwordStdin: passwordStdin, environment: context.environment) == nil {
            throw UsageError(description: "user add: give the password with --password-stdin or ROSTER_PASSWORD")
        }
    }

    func run(_ context: VerbContext) throws -> Int32 {
        guard let source = SecretSource.choose(.password, passwordStdin: passwordStdin, environment: context.environment) else { return 2 }
        let password = try source.read(.newAccountPassword)
        let connection = try context.connect(resume: false)
        var params: [(String, JSONValue)] = [("username", .string(username)), ("password", .string(password))]
        if let email { params.append(("email", .string(email))) }
        // Hashing queues behind other registrations; the daemon answers `busy` itself if that takes too long.
        connection.answerTimeoutMs = nil
        switch try connection.call("users.register", .object(params)) {
        case .success(let result):
            if context.json != nil { context.printJSON(result) } else { printLine(result["username"]?.stringValue ?? username) }
            return 0
        case .failure(let error):
            throw failure("user add", error)
        }
    }
}
