import RosterCore
import Testing
@testable import RosterProtocol

@Suite("JSON-RPC envelope rules (contract §2)")
struct RPCRequestTests {
    private func parse(_ text: String) -> Result<RPCRequest, RPCEnvelopeError> {
        RPCRequest.parse(line: Array(text.utf8))
    }

    private func failure(_ text: String) -> RPCEnvelopeError? {
        if case .failure(let error) = parse(text) { return error }
        return nil
    }

    @Test func acceptsARequestWithOrWithoutJsonrpc() throws {
        for text in [#"{"jsonrpc":"2.0","id":7,"method":"m","params":{"a":1}}"#, #"{"id":7,"method":"m","params":{"a":1}}"#] {
            let request = try parse(text).get()
            #expect(request.id == .number("7"))
            #expect(request.method == "m")
            #expect(request.params.count == 1)
            #expect(!request.isNotification)
        }
    }

    @Test func noIdIsANotification() throws {
        let request = try parse(#"{"method":"m"}"#).get()
        #expect(request.isNotification)
        #expect(request.params.isEmpty)
    }

    @Test func stringAndNullIdsAreKept() throws {
        #expect(try parse(#"{"id":"abc","method":"m"}"#).get().id == .string("abc"))
        #expect(try parse(#"{"id":null,"method":"m"}"#).get().id == .null)
        #expect(try parse(#"{"id":1.5e2,"method":"m"}"#).get().id == .number("1.5e2"))
    }

    @Test func notJSONIsAParseErrorWithNullId() {
        let error = failure("{nope")
        #expect(error?.error == .parseError)
        #expect(error?.id == .null)
        #expect(error?.answer == true)
    }

    @Test(arguments: ["[]", "[{\"id\":1,\"method\":\"m\"}]", "42", "\"text\"", "null", "true"])
    func nonObjectsAreInvalidRequestsWithNullId(text: String) {
        let error = failure(text)
        #expect(error?.error.reason == "invalid_request")
        #expect(error?.id == .null)
    }

    @Test func invalidRequestKeepsAValidId() {
        #expect(failure(#"{"id":3}"#)?.id == .number("3"))
        #expect(failure(#"{"id":3,"method":5}"#)?.error.reason == "invalid_request")
        #expect(failure(#"{"id":3,"jsonrpc":"1.0","method":"m"}"#)?.id == .number("3"))
        #expect(failure(#"{"id":3,"method":"m","extra":1}"#)?.error.reason == "invalid_request")
    }

    /// A key said twice is refused at every depth, whichever key it is, and never resolved to either value.
    @Test(arguments: [
        (#"{"id":3,"method":"session.logout","method":"session.whoami"}"#, JSONValue.number("3"), true),
        (#"{"id":3,"jsonrpc":"2.0","jsonrpc":"2.0","method":"m"}"#, .number("3"), true),
        (#"{"id":3,"method":"m","params":{},"params":{}}"#, .number("3"), true),
        (#"{"id":3,"method":"m","params":{"a":1,"a":1}}"#, .number("3"), true),
        (#"{"id":3,"method":"m","params":{"a":{"b":1,"b":2}}}"#, .number("3"), true),
        (#"{"id":3,"method":"m","params":{"a":[{"b":1,"c":0,"b":2}]}}"#, .number("3"), true),
        (#"{"id":3,"method":"m","params":{"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k1":0}}"#,
         .number("3"), true),
        (#"{"id":3,"id":4,"method":"m"}"#, .null, true),
        (#"{"id":3,"method":"m","id":3}"#, .null, true),
        (#"{"method":"m","method":"n"}"#, .null, true),
        // A notification's params are its own business: refused, not answered.
        (#"{"method":"m","params":{"a":1,"a":2}}"#, .null, false),
    ])
    func duplicateKeysAreInvalidRequests(_ text: String, _ id: JSONValue, _ answered: Bool) {
        let error = failure(text)
        #expect(error?.error == .invalidRequest(problem: "duplicate_member"), "\(text)")
        #expect(error.map { ErrorCodes.code(for: $0.error) } == -32600)
        #expect(error?.id == id, "\(text)")
        #expect(error?.answer == answered, "\(text)")
    }

    @Test func equalKeysInDifferentObjectsAreFine() throws {
        let request = try parse(#"{"id":1,"method":"m","params":{"id":1,"method":"x","a":{"id":2},"b":[{"id":3},{"id":4}]}}"#).get()
        #expect(request.params.count == 4)
    }

    @Test func anInvalidIdIsAnsweredWithNull() {
        for text in [#"{"id":{},"method":"m"}"#, #"{"id":[1],"method":"m"}"#, #"{"id":true,"method":"m"}"#] {
            #expect(failure(text)?.id == .null)
            #expect(failure(text)?.error.reason == "invalid_request")
        }
    }

    @Test func positionalParamsAreWrongParams() {
        let error = failure(#"{"id":1,"method":"m","params":[1,2]}"#)
        #expect(error?.error == .invalidParams(param: "params", problem: .wrongType))
        #expect(ErrorCodes.code(for: error?.error ?? .internal) == -32602)
        #expect(failure(#"{"method":"m","params":[1,2]}"#)?.answer == false)
    }
}

@Suite("Params checked against a method's spec")
struct ParamsTests {
    private let fields: [FieldSpec] = [
        FieldSpec("name", .string),
        .optional("age", .integer(0...150)),
        .optional("mode", .oneOf(["a", "b"])),
        .optional("timing", .object([.optional("debounce_ms", .integer(0...10_000))])),
    ]

    private func check(_ members: [(String, JSONValue)]) -> RosterError? {
        do {
            _ = try Params(validating: members, against: fields)
            return nil
        } catch {
            return error
        }
    }

    @Test func wellFormedParamsPass() throws {
        let params = try Params(validating: [("name", "x"), ("age", 5), ("timing", ["debounce_ms": 0])], against: fields)
        #expect(params.string("name") == "x")
        #expect(params.int("age") == 5)
    }

    @Test func everyProblemHasItsReasonAndParam() {
        #expect(check([]) == .invalidParams(param: "name", problem: .missing))
        #expect(check([("name", .null)]) == .invalidParams(param: "name", problem: .missing))
        #expect(check([("name", 1)]) == .invalidParams(param: "name", problem: .wrongType))
        #expect(check([("name", "x"), ("age", "5")]) == .invalidParams(param: "age", problem: .wrongType))
        #expect(check([("name", "x"), ("age", .number("1.5"))]) == .invalidParams(param: "age", problem: .wrongType))
        #expect(check([("name", "x"), ("age", 151)]) == .invalidParams(param: "age", problem: .outOfRange))
        #expect(check([("name", "x"), ("mode", "c")]) == .invalidParams(param: "mode", problem: .outOfRange))
        #expect(check([("name", "x"), ("nmae", "y")]) == .invalidParams(param: "nmae", problem: .unknown))
        #expect(check([("name", "x"), ("timing", ["debounce_ms": 10_001])])
                == .invalidParams(param: "timing.debounce_ms", problem: .outOfRange))
        #expect(check([("name", "x"), ("timing", 3)]) == .invalidParams(param: "timing", problem: .wrongType))
    }

    /// Contract v2: an outage is 1041, beside `storage_full`'s 1040, with its hint on the wire.
    @Test func storageUnavailableIs1041WithItsRetryHint() throws {
        let error = RosterError.storageUnavailable(retryAfterMs: 250)
        #expect(ErrorCodes.code(for: error) == 1041)
        let line = RPCMessage.error(id: 3, error, message: "m")
        #expect(String(decoding: line, as: UTF8.self).contains(
            #"{"code":1041,"message":"m","data":{"reason":"storage_unavailable","retry_after_ms":250}}"#))
    }

    @Test func everyParamsProblemMapsToInvalidParamsCode() {
        for problem in ParamProblem.allCases {
            #expect(ErrorCodes.code(for: .invalidParams(param: "p", problem: problem)) == -32602)
        }
    }
}

@Suite("Messages on the wire")
struct RPCMessageTests {
    @Test func errorLineCarriesCodeMessageAndReasonData() throws {
        let line = RPCMessage.error(id: 7, .rateLimited(retryAfterMs: 1500), message: "slow down")
        #expect(line.last == 0x0A)
        let value = try JSONParser.parse(line.dropLast())
        #expect(value["jsonrpc"] == "2.0")
        #expect(value["id"] == 7)
        #expect(value["error"]?["code"] == 1023)
        #expect(value["error"]?["message"] == "slow down")
        #expect(value["error"]?["data"] == ["reason": "rate_limited", "retry_after_ms": 1500])
    }

    @Test func eventLineHasTypeFirst() {
        let line = RPCMessage.event(type: "session", [("user", .null)])
        #expect(String(decoding: line, as: UTF8.self)
                == "{\"jsonrpc\":\"2.0\",\"method\":\"event\",\"params\":{\"type\":\"session\",\"user\":null}}\n")
    }
}
