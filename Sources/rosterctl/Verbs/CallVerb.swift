import RosterClient
import RosterProtocol

/// `rosterctl call METHOD [JSON]`: one raw request, its answer printed as JSON.
struct CallVerb: Verb {
    static let configuration = VerbConfiguration(
        name: "call", usage: "call METHOD [PARAMS-JSON]", summary: "Send one raw request and print its result",
        group: .daemon)

    let method: String
    let params: JSONValue

    init(arguments: [String]) throws(UsageError) {
        guard let method = arguments.first else { throw UsageError(description: "call needs a METHOD") }
        guard arguments.count <= 2 else { throw UsageError(description: "call takes METHOD and at most one JSON object") }
        self.method = method
        if arguments.count == 2 {
            do {
                params = try JSONParser.parse(Array(arguments[1].utf8))
            } catch {
                throw UsageError(description: "params are not valid JSON: \(error.problem) at byte \(error.offset)")
            }
        } else {
            params = .object([])
        }
    }

    func run(_ context: VerbContext) throws -> Int32 {
        // A raw call acts as the stored session, so `call contacts.list` works after `login`.
        let connection = try context.connect()
        switch try connection.call(method, params) {
        case .success(let result):
            context.printJSON(result)
            return 0
        case .failure(let error):
            writeError("rosterctl: \(error)")
            if context.json != nil { context.printJSON(error.data) }
            return 1
        }
    }
}
