import RosterClient
import RosterProtocol

/// `rosterctl call METHOD [JSON]`: one raw request, its answer printed as JSON.
struct CallVerb {
    static let usage = "call METHOD [PARAMS-JSON]"
    static let summary = "Send one raw request and print its result"

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

    func run(_ connection: ClientConnection, options: GlobalOptions) throws(ClientError) -> Int32 {
        switch try connection.call(method, params) {
        case .success(let result):
            print(render(result, pretty: options.json == .pretty))
            return 0
        case .failure(let error):
            writeError("rosterctl: \(error)")
            if options.json != nil { print(render(error.data, pretty: options.json == .pretty)) }
            return 1
        }
    }
}
