import RosterProtocol

/// `rosterctl logout`: revokes the stored session's token at the daemon and removes the file.
struct LogoutVerb: Verb {
    static let configuration = VerbConfiguration(
        name: "logout", usage: "logout", summary: "Log out and forget the stored session", group: .session)

    init(arguments: [String]) throws(UsageError) {
        _ = try VerbArguments(arguments, verb: "logout").positionals(min: 0, max: 0, verb: "logout", usage: Self.configuration.usage)
    }

    func run(_ context: VerbContext) throws -> Int32 {
        guard let file = context.sessionFile, let token = file.read() else {
            // Nothing stored is already the state logout leads to; say so without failing a script.
            if context.json != nil { context.printJSON(["user": nil]) } else { writeError("rosterctl: not logged in") }
            return 0
        }
        let connection = try context.connect(resume: false)
        guard let user = try connection.resume(token: token) else {
            file.remove()
            if context.json != nil { context.printJSON(["user": nil]) } else { writeError("rosterctl: the stored session had expired") }
            return 0
        }
        if case .failure(let error) = try connection.call("session.logout") { throw failure("logout", error) }
        file.remove()
        if context.json != nil { context.printJSON(["user": nil, "logged_out": .string(user)]) } else { printLine("logged out \(user)") }
        return 0
    }
}
