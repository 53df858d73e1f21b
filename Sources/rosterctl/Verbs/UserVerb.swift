import Glibc
import RosterProtocol

/// What `rosterctl user …` was asked to do, parsed from its arguments.
enum UserCommand: Equatable {
    /// Which slice of `user list` to print; no limit prints them all.
    typealias Page = ListPage

    case add(String, email: String?, passwordStdin: Bool)
    case list(query: String?, Page)
    case show(String)
    case lock(String, reason: String?)
    case unlock(String)
    /// `yes` skips typing the name (and is what lets a script delete at all).
    case remove(String, yes: Bool)
    case resetLimit(String)
}

/// `rosterctl user`: creating an account, and the administrator's `admin.users.*` (root or the daemon's uid).
struct UserVerb: Verb {
    static let configuration = VerbConfiguration(
        name: "user", usage: "user COMMAND [ARGUMENTS...]",
        summary: "Create accounts; as root or the daemon's user, find, lock, unlock and delete them", group: .users,
        options: [("--email ADDRESS", "add: give the account an email address"),
                  ("--password-stdin", "add: read the password from the first line of standard input"),
                  ("--limit N", "list: print at most N users (default: all)"),
                  ("--offset N", "list: skip the first N"),
                  ("--reason TEXT", "lock: why, for the audit log"),
                  ("--yes", "rm: do not ask to type the name (needed without a terminal)")],
        actions: [(usages.add, "Create an account (password from stdin, $ROSTER_PASSWORD or a prompt)"),
                  (usages.list, "List users by name; QUERY matches part of a username or email"),
                  (usages.show, "Show one user, with failed log-ins, live sessions and its lock"),
                  (usages.lock, "Lock an account: log-ins fail, its sessions end at once"),
                  (usages.unlock, "Unlock an account (its old sessions stay ended)"),
                  (usages.remove, "Delete an account, its contacts and sessions for good"),
                  (usages.resetLimit, "Clear the failed log-ins that rate-limit an account")])

    static let usages = (
        add: "user add NAME [--email ADDRESS] [--password-stdin]",
        list: "user list [QUERY] [--limit N] [--offset N]",
        show: "user show NAME",
        lock: "user lock NAME [--reason TEXT]",
        unlock: "user unlock NAME",
        remove: "user rm NAME [--yes]",
        resetLimit: "user reset-limit NAME")

    /// Users asked per `admin.users.list` call; longer lists are read page by page.
    static let pageSize = 500

    let command: UserCommand

    init(arguments: [String]) throws(UsageError) {
        command = try UserVerb.parse(arguments)
    }

    static func parse(_ arguments: [String]) throws(UsageError) -> UserCommand {
        guard let action = arguments.first else { throw UsageError(description: "usage: rosterctl \(configuration.usage)") }
        let rest = Array(arguments.dropFirst())
        switch action {
        case "add":
            let parsed = try VerbArguments(rest, verb: "user add", flags: ["--password-stdin"], valued: ["--email"])
            let words = try parsed.positionals(min: 1, max: 1, verb: "user add", usage: usages.add)
            return .add(words[0], email: parsed.values["--email"], passwordStdin: parsed.flags.contains("--password-stdin"))
        case "list":
            let parsed = try VerbArguments(rest, verb: "user list", valued: ["--limit", "--offset"])
            let words = try parsed.positionals(min: 0, max: 1, verb: "user list", usage: usages.list)
            return .list(query: words.first.flatMap { $0.isEmpty ? nil : $0 }, try ListPage.parse(parsed, verb: "user list"))
        case "show":
            return .show(try name(rest, "user show", usages.show))
        case "lock":
            let parsed = try VerbArguments(rest, verb: "user lock", valued: ["--reason"])
            let words = try parsed.positionals(min: 1, max: 1, verb: "user lock", usage: usages.lock)
            return .lock(words[0], reason: parsed.values["--reason"].flatMap { $0.isEmpty ? nil : $0 })
        case "unlock":
            return .unlock(try name(rest, "user unlock", usages.unlock))
        case "rm":
            let parsed = try VerbArguments(rest, verb: "user rm", flags: ["--yes"])
            let words = try parsed.positionals(min: 1, max: 1, verb: "user rm", usage: usages.remove)
            return .remove(words[0], yes: parsed.flags.contains("--yes"))
        case "reset-limit":
            return .resetLimit(try name(rest, "user reset-limit", usages.resetLimit))
        default:
            throw UsageError(description: "user: unknown command '\(action)'; use add, list, show, lock, unlock, rm "
                + "or reset-limit (see rosterctl user --help)")
        }
    }

    /// An action whose only argument is the user's name (or email).
    private static func name(_ arguments: [String], _ verb: String, _ usage: String) throws(UsageError) -> String {
        let words = try VerbArguments(arguments, verb: verb).positionals(min: 1, max: 1, verb: verb, usage: usage)
        guard !words[0].isEmpty else { throw UsageError(description: "usage: rosterctl \(usage)") }
        return words[0]
    }

    /// Scripts must say what they mean before anything is asked or sent (exit 2).
    func validate(_ context: VerbContext) throws(UsageError) {
        switch command {
        case .add(_, _, let passwordStdin):
            if SecretSource.choose(.password, passwordStdin: passwordStdin, environment: context.environment) == nil {
                throw UsageError(description: "user add: give the password with --password-stdin or ROSTER_PASSWORD")
            }
        case .remove(_, let yes):
            guard yes || isatty(0) == 1 else {
                throw UsageError(description: "user rm: without a terminal to type the name on, pass --yes")
            }
        case .list, .show, .lock, .unlock, .resetLimit:
            return
        }
    }

    func run(_ context: VerbContext) throws -> Int32 {
        switch command {
        case .add(let username, let email, let passwordStdin):
            return try add(username, email: email, passwordStdin: passwordStdin, context)
        case .list(let query, let page): return try UserAdmin.list(query: query, page, context)
        case .show(let username): return try UserAdmin.show(username, context)
        case .lock(let username, let reason): return try UserAdmin.lock(username, reason: reason, context)
        case .unlock(let username): return try UserAdmin.unlock(username, context)
        case .remove(let username, let yes): return try UserAdmin.remove(username, yes: yes, context)
        case .resetLimit(let username): return try UserAdmin.resetLimit(username, context)
        }
    }

    private func add(_ username: String, email: String?, passwordStdin: Bool, _ context: VerbContext) throws -> Int32 {
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
