import RosterProtocol

/// `rosterctl whoami`: the user the stored session belongs to; exit 1 when not logged in.
struct WhoamiVerb: Verb {
    static let configuration = VerbConfiguration(
        name: "whoami", usage: "whoami", summary: "Show the logged-in user", group: .session)

    init(arguments: [String]) throws(UsageError) {
        _ = try VerbArguments(arguments, verb: "whoami").positionals(min: 0, max: 0, verb: "whoami", usage: Self.configuration.usage)
    }

    func run(_ context: VerbContext) throws -> Int32 {
        let connection = try context.connect()
        let result: JSONValue
        switch try connection.call("session.whoami") {
        case .success(let value): result = value
        case .failure(let error): throw failure("whoami", error)
        }
        let user = result["user"]
        if context.json != nil {
            context.printJSON(result)
        } else if let name = user?["username"]?.stringValue {
            printLine(name)
        }
        guard user?["username"] != nil else {
            if context.json == nil { writeError("rosterctl: not logged in") }
            return 1
        }
        return 0
    }
}
