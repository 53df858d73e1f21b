import RosterProtocol

/// `rosterctl check-username NAME`: the register rules on a name; exit 0 if it is available, 1 if not.
struct CheckUsernameVerb: Verb {
    static let configuration = VerbConfiguration(
        name: "check-username", usage: "check-username NAME", summary: "Check whether a username can be registered",
        group: .users)

    let username: String

    init(arguments: [String]) throws(UsageError) {
        let words = try VerbArguments(arguments, verb: "check-username")
            .positionals(min: 1, max: 1, verb: "check-username", usage: Self.configuration.usage)
        username = words[0]
    }

    func run(_ context: VerbContext) throws -> Int32 {
        let connection = try context.connect(resume: false)
        let result: JSONValue
        switch try connection.call("users.check_username", ["username": .string(username)]) {
        case .success(let value): result = value
        case .failure(let error): throw failure("check-username", error)
        }
        let available = result["state"] == "valid"
        if context.json != nil {
            context.printJSON(result)
        } else {
            let message = result["message"]?.stringValue ?? ""
            let code = result["code"]?.stringValue ?? ""
            let look: Style.Attributes = available ? .colour(.green) : .colour(.red)
            printLine(context.style.paint("\(message) (\(code))", look))
        }
        return available ? 0 : 1
    }
}
