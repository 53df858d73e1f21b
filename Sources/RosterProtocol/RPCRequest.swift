import RosterCore

/// A request as the dispatcher sees it, after the envelope rules (protocol.md §Envelope) were checked.
public struct RPCRequest: Sendable {
    /// The request's id exactly as sent (string, number or null), or nil for a notification.
    public let id: JSONValue?
    public let method: String
    /// Named params; absent params read as an empty object.
    public let params: [(String, JSONValue)]

    public var isNotification: Bool { id == nil }

    public init(id: JSONValue?, method: String, params: [(String, JSONValue)]) {
        self.id = id
        self.method = method
        self.params = params
    }
}

/// Why a line could not become a request, with the id to answer to (null when none could be read).
public struct RPCEnvelopeError: Error, Sendable {
    public let id: JSONValue
    public let error: RosterError
    /// A notification's envelope errors after the method name are not answered (JSON-RPC 2.0 §4.1).
    public let answer: Bool
}

extension RPCRequest {
    /// Parses one framed line into a request, or says which §2 rule it broke.
    public static func parse(line: [UInt8]) -> Result<RPCRequest, RPCEnvelopeError> {
        let document: JSONValue
        let duplicate: JSONParser.DuplicateKey?
        do {
            (document, duplicate) = try JSONParser.parseKeepingDuplicateKeys(line)
        } catch {
            return .failure(RPCEnvelopeError(id: .null, error: .parseError, answer: true))
        }
        guard case .object(let members) = document else {
            let problem = document.arrayValue != nil ? "batch_unsupported"
                                                     : "not_an_object"
            return .failure(RPCEnvelopeError(id: .null, error: .invalidRequest(problem: problem), answer: true))
        }
        // Two ids name no request: the answer goes to null, as for an id that cannot be read.
        let idIsAmbiguous = members.count(where: { $0.0 == "id" }) > 1
        let rawID = idIsAmbiguous ? JSONValue.null : document["id"]
        var id: JSONValue? = nil
        if let rawID {
            switch rawID {
            case .string, .number, .null: id = rawID
            case .bool, .array, .object:
                return .failure(RPCEnvelopeError(
                    id: .null, error: .invalidRequest(problem: "invalid_id"), answer: true))
            }
        }
        func invalid(_ problem: String) -> Result<RPCRequest, RPCEnvelopeError> {
            .failure(RPCEnvelopeError(id: id ?? .null, error: .invalidRequest(problem: problem), answer: true))
        }
        // Whichever of two values a reader took (the last, in most), another may take the first: `method` or a
        // param said twice is refused rather than guessed. Deeper than the envelope, a notification's refusal
        // goes unanswered like any other about its params.
        if let duplicate {
            return .failure(RPCEnvelopeError(id: id ?? .null, error: .invalidRequest(problem: "duplicate_member"),
                                             answer: duplicate.depth == 0 || id != nil))
        }
        if let version = document["jsonrpc"], version != .string("2.0") {
            return invalid("invalid_version")
        }
        guard let methodValue = document["method"] else { return invalid("missing_method") }
        guard case .string(let method) = methodValue else { return invalid("invalid_method") }
        for (key, _) in members where !["jsonrpc", "id", "method", "params"].contains(key) {
            return invalid("unknown_member")
        }
        var params: [(String, JSONValue)] = []
        switch document["params"] {
        case nil, .null?: break
        case .object(let named)?: params = named
        case .array?, .string?, .number?, .bool?:
            return .failure(RPCEnvelopeError(
                id: id ?? .null, error: .invalidParams(param: "params", problem: .wrongType), answer: id != nil))
        }
        return .success(RPCRequest(id: id, method: method, params: params))
    }
}
